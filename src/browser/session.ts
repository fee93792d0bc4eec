import { mkdirSync } from 'node:fs';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { log } from '../log/log.js';
import type { Resolver, UrlPolicy } from '../net/index.js';
import { startGuardProxy, type BlockedRequest, type GuardProxy } from './guard-proxy.js';
import type { BrowserProfileSpec } from './profiles.js';
import type { RoleRef } from './snapshot.js';
import { background } from '../util/background.js';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Chromium switches for every profile. Everything Chromium fetches over HTTP(S) and WS(S) —
 * pages, subresources, fetch/XHR, WebSockets, beacons, prefetch and preconnect, its own
 * background traffic — goes to the guard proxy (`--proxy-server`, with Playwright's
 * `<-loopback>` so loopback and link-local are proxied too); with a fixed proxy Chromium
 * resolves no host itself. What could go around the proxy is switched off: QUIC (and with it
 * WebTransport), non-proxied WebRTC UDP (STUN/ICE), DNS-over-HTTPS, service workers (blocked
 * per context), extensions. Playwright drives Chromium over a pipe, not a debugging port.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  // Fewer calls home: they would only be refused by the guard and clutter what the model reads.
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-client-side-phishing-detection',
  '--metrics-recording-only',
  '--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,DnsOverHttps',
];

/** Proxy variables would only confuse Chromium: its one proxy is the guard. */
const PROXY_ENV = /^(https?_proxy|all_proxy|no_proxy)$/i;

export interface SessionOptions {
  policy: UrlPolicy;
  resolve?: Resolver | undefined;
  /** Test seam of the guard proxy (see GuardProxyOptions.dial). */
  dial?: ((checkedAddress: string) => string) | undefined;
}

/** The refs of a tab's last snapshot, and where that snapshot was taken. */
export interface TabRefs {
  refs: Record<string, RoleRef>;
  selector?: string | undefined;
  frame?: string | undefined;
}

/**
 * One running profile: a persistent Chromium context on the profile's own user-data dir, its
 * guard proxy, its tabs (`t1`, `t2`, … — stable for the life of the session) and the refs of
 * each tab's last snapshot.
 */
export class BrowserSession {
  readonly startedAt = Date.now();
  private readonly tabIds = new WeakMap<Page, string>();
  private readonly tabs = new Map<string, Page>();
  private readonly refs = new WeakMap<Page, TabRefs>();
  private readonly blocked: BlockedRequest[] = [];
  private nextTab = 1;
  private currentId: string | undefined;
  private closed = false;

  private constructor(
    readonly spec: BrowserProfileSpec,
    readonly context: BrowserContext,
    private readonly proxy: GuardProxy,
    readonly launchMs: number,
  ) {
    context.on('page', (page) => this.adopt(page));
    // Chromium gone on its own (crash, killed): the session is over and its proxy with it.
    context.on('close', () => {
      if (this.closed) return;
      this.closed = true;
      log.warn({ profile: spec.name }, 'browser exited');
      background(proxy.close(), 'browser guard proxy not closed', { fields: { profile: spec.name } });
    });
    for (const page of context.pages()) this.adopt(page);
  }

  static async start(spec: BrowserProfileSpec, options: SessionOptions): Promise<BrowserSession> {
    const began = Date.now();
    let session: BrowserSession | undefined;
    const early: BlockedRequest[] = [];
    const proxy = await startGuardProxy({
      policy: options.policy,
      resolve: options.resolve,
      dial: options.dial,
      onBlocked: (event) => (session ? session.noteBlocked(event) : early.push(event)),
    });
    try {
      mkdirSync(spec.userDataDir, { recursive: true, mode: 0o700 });
      const env = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && !PROXY_ENV.test(k))) as Record<string, string>;
      const context = await chromium.launchPersistentContext(spec.userDataDir, {
        executablePath: CHROMIUM_PATH,
        headless: spec.headless,
        args: [...CHROMIUM_ARGS],
        // Playwright adds `<-loopback>` to the bypass list, so loopback goes through the guard too.
        proxy: { server: proxy.server },
        env,
        serviceWorkers: 'block',
        acceptDownloads: false,
        viewport: { width: 1280, height: 800 },
        // Warden's own shutdown closes the browser; Playwright's SIGINT handler would exit the process.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
      session = new BrowserSession(spec, context, proxy, Date.now() - began);
      for (const event of early) session.noteBlocked(event);
      log.info({ profile: spec.name, launchMs: session.launchMs }, 'browser started');
      return session;
    } catch (err) {
      await proxy.close();
      throw err;
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private adopt(page: Page): void {
    if (this.tabIds.has(page)) return;
    const id = `t${this.nextTab++}`;
    this.tabIds.set(page, id);
    this.tabs.set(id, page);
    // A page the page opened (window.open, target=_blank) becomes the current tab, as in a browser.
    this.currentId = id;
    page.on('close', () => {
      this.tabs.delete(id);
      if (this.currentId === id) this.currentId = [...this.tabs.keys()].at(-1);
    });
  }

  private noteBlocked(event: BlockedRequest): void {
    this.blocked.push(event);
    if (this.blocked.length > 100) this.blocked.shift();
  }

  /** Requests the guard refused since `since` (a Date.now() value). */
  blockedSince(since: number): BlockedRequest[] {
    return this.blocked.filter((b) => b.at >= since);
  }

  tabId(page: Page): string {
    return this.tabIds.get(page) ?? '?';
  }

  listTabs(): Array<{ id: string; page: Page; current: boolean }> {
    return [...this.tabs].map(([id, page]) => ({ id, page, current: id === this.currentId }));
  }

  /** The tab a call names, else the current one; undefined when there is none. */
  tab(id?: string): Page | undefined {
    if (id) return this.tabs.get(id.trim().toLowerCase());
    return this.currentId ? this.tabs.get(this.currentId) : undefined;
  }

  focus(id: string): Page | undefined {
    const page = this.tab(id);
    if (page) this.currentId = this.tabId(page);
    return page;
  }

  /** The current tab, or a new blank one when every tab is closed. */
  async currentOrNewTab(): Promise<Page> {
    return this.tab() ?? (await this.newTab());
  }

  async newTab(): Promise<Page> {
    const page = await this.context.newPage();
    this.adopt(page);
    this.currentId = this.tabId(page);
    return page;
  }

  setRefs(page: Page, refs: TabRefs): void {
    this.refs.set(page, refs);
  }

  refsOf(page: Page): TabRefs | undefined {
    return this.refs.get(page);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.context.close();
    } catch (err) {
      log.warn({ err, profile: this.spec.name }, 'browser did not close cleanly');
    }
    await this.proxy.close();
    log.info({ profile: this.spec.name }, 'browser stopped');
  }
}
