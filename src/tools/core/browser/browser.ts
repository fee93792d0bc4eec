import type { Page } from 'playwright-core';
import {
  BrowserManager,
  checkAfterAction,
  checkBrowserUrl,
  locatorForRef,
  navigateGuarded,
  NAVIGATION_TIMEOUT_MS,
  snapshotPage,
  truncateSnapshot,
  type BlockedRequest,
  type BrowserSession,
  type GuardContext,
  type NavigationResult,
} from '../../../browser/index.js';
import { urlPolicyFor } from '../../../net/index.js';
import type { WardenConfig } from '../../../config/index.js';
import { resolveDataDir } from '../../../store/data-dir.js';
import type { ToolImplementation, ToolResult } from '../../types.js';
import { errorResult, textResult } from '../fs/tool-result.js';
import { wrapUntrusted } from '../../untrusted.js';
import { act, BROWSER_LIMITS, timeoutOf } from './browser-act.js';
import { BROWSER_ACTIONS, ACT_KINDS, browserParameters, type BrowserArgs } from './browser-schema.js';

export { BROWSER_LIMITS };

export interface BrowserToolDeps {
  manager: BrowserManager;
}

type Handler = (args: BrowserArgs, manager: BrowserManager, guard: GuardContext) => Promise<ToolResult>;

const firstLine = (err: unknown) => ((err as Error).message ?? String(err)).split('\n')[0]!;

const pageLabel = async (session: BrowserSession, page: Page) => {
  const title = await page.title().catch(() => '');
  return `${session.tabId(page)}: ${title ? `${title} — ` : ''}${page.url()}`;
};

/** The page chose these URLs, so they are shown as untrusted data like the page itself. */
function blockedNote(blocked: BlockedRequest[]): string {
  if (blocked.length === 0) return '';
  const shown = blocked.slice(0, 5).map((b) => `${b.url}: ${b.reason}`);
  if (blocked.length > 5) shown.push(`… and ${blocked.length - 5} more`);
  return `\nThe browser guard refused ${blocked.length} request(s) of this page:\n${wrapUntrusted('browser:refused-requests', shown.join('\n'))}`;
}

/** Unwraps a session result; an error (unknown profile, launch failure, not running) becomes the tool error. */
async function onSession(
  manager: BrowserManager,
  args: BrowserArgs,
  fn: (session: BrowserSession) => Promise<ToolResult>,
  start = true,
  gate?: () => Promise<ToolResult | undefined>,
): Promise<ToolResult> {
  const result = await manager.withSession(args.profile, fn, { start, gate });
  return result.ok ? result.value : errorResult(result.error, { status: 'error', profile: args.profile });
}

/** `onSession` for actions on one tab: the call's `targetId`, else the current tab. */
function onTab(
  manager: BrowserManager,
  args: BrowserArgs,
  fn: (session: BrowserSession, page: Page) => Promise<ToolResult>,
  start = true,
  gate?: () => Promise<ToolResult | undefined>,
): Promise<ToolResult> {
  return onSession(
    manager,
    args,
    async (session) => {
      const tab = tabOrError(session, args);
      return 'error' in tab ? tab.error : fn(session, tab.page);
    },
    start,
    gate,
  );
}

function tabOrError(session: BrowserSession, args: BrowserArgs): { page: Page } | { error: ToolResult } {
  const page = session.tab(args.targetId);
  if (page) return { page };
  if (args.targetId) return { error: errorResult(`No tab ${args.targetId}. Use action "tabs" to list the open tabs.`, { status: 'error' }) };
  return { error: errorResult('No tab is open. Use action "open" with a url first.', { status: 'error' }) };
}

async function navigationResult(session: BrowserSession, page: Page, outcome: NavigationResult, verb: string): Promise<ToolResult> {
  if (!outcome.ok) return errorResult(outcome.error, { status: outcome.blocked ? 'blocked' : 'error', url: outcome.url, targetId: session.tabId(page) });
  const label = await pageLabel(session, page);
  const redirects = outcome.redirects.length > 0 ? `\nRedirected through: ${outcome.redirects.join(' → ')}` : '';
  return textResult(
    `${verb} ${session.tabId(page)} (HTTP ${outcome.status ?? '—'}). Use action "snapshot" to read the page and get refs.\n${wrapUntrusted(`browser:${outcome.url}`, `${label}${redirects}`)}${blockedNote(outcome.blocked)}`,
    { status: 'ok', targetId: session.tabId(page), url: outcome.url, httpStatus: outcome.status, redirects: outcome.redirects, blocked: outcome.blocked.length },
  );
}

/** The gate of open/navigate: a URL the guard refuses is answered before any Chromium is started for it. */
const refuseEarly = (url: string, guard: GuardContext) => async (): Promise<ToolResult | undefined> => {
  const verdict = await checkBrowserUrl(url, guard);
  return verdict.allowed ? undefined : errorResult(`Navigation blocked: ${verdict.reason}`, { status: 'blocked', url });
};

const requireUrl = (args: BrowserArgs): string | undefined => args.url ?? args.targetUrl;

const handlers: Record<(typeof BROWSER_ACTIONS)[number], Handler> = {
  async status(_args, manager) {
    const lines: string[] = [];
    for (const spec of manager.profiles()) {
      const session = await manager.running(spec.name);
      const state = session ? `running, ${session.listTabs().length} tab(s), up ${Math.round((Date.now() - session.startedAt) / 1000)} s` : 'not running';
      lines.push(`${spec.name}${spec.name === manager.config.browser.defaultProfile ? ' (default)' : ''}: ${state}${spec.headless ? '' : ', windowed'}`);
    }
    const policy = manager.config.browser.ssrfPolicy;
    lines.push(`Private networks: ${policy?.allowPrivateNetwork ? 'allowed (cloud metadata stays blocked)' : 'blocked'}${policy?.hostnameAllowlist?.length ? `; only hosts ${policy.hostnameAllowlist.join(', ')}` : ''}`);
    return textResult(lines.join('\n'), { status: 'ok' });
  },

  async profiles(_args, manager) {
    const lines = await Promise.all(manager.profiles().map(async (p) => `${p.name}${p.name === manager.config.browser.defaultProfile ? ' (default)' : ''}: ${(await manager.running(p.name)) ? 'running' : 'stopped'}`));
    return textResult(lines.join('\n'), { status: 'ok' });
  },

  start: (args, manager) =>
    onSession(manager, args, async (session) => {
      await session.currentOrNewTab();
      return textResult(`Browser profile "${session.spec.name}" is running (${session.listTabs().length} tab(s)).`, { status: 'ok', profile: session.spec.name, launchMs: session.launchMs });
    }),

  async stop(args, manager) {
    const stopped = await manager.stopProfile(args.profile);
    if (!stopped.ok) return errorResult(stopped.error, { status: 'error' });
    return textResult(stopped.value.wasRunning ? `Browser profile "${stopped.value.profile}" stopped.` : `Browser profile "${stopped.value.profile}" was not running.`, { status: 'ok', ...stopped.value });
  },

  tabs: (args, manager) =>
    onSession(
      manager,
      args,
      async (session) => {
        const tabs = session.listTabs();
        if (tabs.length === 0) return textResult('No tabs are open.', { status: 'ok', tabs: [] });
        const lines = await Promise.all(tabs.map(async (t) => `${t.current ? '* ' : '  '}${await pageLabel(session, t.page)}`));
        return textResult(`Tabs (* = current):\n${wrapUntrusted('browser:tabs', lines.join('\n'))}`, { status: 'ok', tabs: tabs.map((t) => ({ targetId: t.id, url: t.page.url(), current: t.current })) });
      },
      false,
    ),

  open: (args, manager, guard) => {
    const url = requireUrl(args);
    if (!url) return Promise.resolve(errorResult('open needs a url.', { status: 'error' }));
    return onSession(manager, args, async (session) => {
      const tabs = session.listTabs();
      const reuse = tabs.length === 1 && tabs[0]!.page.url() === 'about:blank' ? tabs[0]!.page : undefined;
      const page = reuse ?? (await session.newTab());
      const outcome = await navigateGuarded(session, page, url, guard);
      if (!outcome.ok && !reuse) await page.close().catch(() => undefined);
      return navigationResult(session, page, outcome, 'Opened');
    }, true, refuseEarly(url, guard));
  },

  navigate: (args, manager, guard) => {
    const url = requireUrl(args);
    if (!url) return Promise.resolve(errorResult('navigate needs a url.', { status: 'error' }));
    return onSession(manager, args, async (session) => {
      const page = args.targetId ? session.tab(args.targetId) : await session.currentOrNewTab();
      if (!page) return errorResult(`No tab ${args.targetId}. Use action "tabs" to list the open tabs.`, { status: 'error' });
      return navigationResult(session, page, await navigateGuarded(session, page, url, guard), 'Loaded');
    }, true, refuseEarly(url, guard));
  },

  back: (args, manager, guard) =>
    onTab(
      manager,
      args,
      async (session, page) => {
        const before = page.url();
        let moved = true;
        const outcome = await navigateGuarded(session, page, undefined, guard, async (p) => {
          const response = await p.goBack({ waitUntil: 'domcontentloaded', timeout: NAVIGATION_TIMEOUT_MS });
          // Playwright answers null both for "no earlier page" and for a same-document step back.
          moved = response !== null || p.url() !== before;
          return response;
        });
        if (outcome.ok && !moved) return errorResult(`There is no earlier page in ${session.tabId(page)}.`, { status: 'error', targetId: session.tabId(page) });
        return navigationResult(session, page, outcome, 'Went back in');
      },
      false,
    ),

  focus: (args, manager) =>
    onSession(
      manager,
      args,
      async (session) => {
        if (!args.targetId) return errorResult('focus needs a targetId (see action "tabs").', { status: 'error' });
        const page = session.focus(args.targetId);
        if (!page) return errorResult(`No tab ${args.targetId}. Use action "tabs" to list the open tabs.`, { status: 'error' });
        await page.bringToFront();
        return textResult(`Current tab is now ${session.tabId(page)}.`, { status: 'ok', targetId: session.tabId(page) });
      },
      false,
    ),

  close: (args, manager) =>
    onTab(
      manager,
      args,
      async (session, page) => {
        const id = session.tabId(page);
        await page.close();
        return textResult(`Closed tab ${id}.`, { status: 'ok', targetId: id });
      },
      false,
    ),

  snapshot: (args, manager) =>
    onTab(
      manager,
      args,
      async (session, page) => {
        // Reference D5: efficient mode means interactive, compact, depth 6, 8 000 characters — each overridable.
        const efficient = args.mode === 'efficient';
        const options = {
          interactive: args.interactive ?? (efficient || undefined),
          compact: args.compact ?? (efficient || undefined),
          maxDepth: args.depth ?? (efficient ? 6 : undefined),
          selector: args.selector,
          frame: args.frame,
        };
        let snap;
        try {
          snap = await snapshotPage(page, options);
        } catch (err) {
          return errorResult(`Snapshot failed: ${firstLine(err)}`, { status: 'error' });
        }
        session.setRefs(page, { refs: snap.refs, selector: args.selector, frame: args.frame });
        const maxChars = Math.min(args.maxChars ?? (efficient ? BROWSER_LIMITS.efficientMaxChars : BROWSER_LIMITS.defaultMaxChars), BROWSER_LIMITS.maxCharsCap);
        const { text, truncated } = truncateSnapshot(snap.snapshot, maxChars);
        const label = await pageLabel(session, page);
        return textResult(
          `Snapshot of ${session.tabId(page)}; act on elements with action "act" and a ref (refs are valid until the next snapshot).\n${wrapUntrusted(`browser:${page.url()}`, `${label}\n\n${text}`)}`,
          { status: 'ok', targetId: session.tabId(page), url: page.url(), truncated, ...snap.stats },
        );
      },
      false,
    ),

  screenshot: (args, manager) =>
    onTab(
      manager,
      args,
      async (session, page) => {
        const type = args.type ?? 'png';
        let data: Buffer;
        try {
          if (args.ref) {
            const found = locatorForRef(page, session.refsOf(page), args.ref);
            if (!found.ok) return errorResult(found.error, { status: 'error' });
            data = await found.locator.screenshot({ type, timeout: timeoutOf(args) });
          } else {
            data = await page.screenshot({ type, fullPage: args.fullPage ?? false, timeout: timeoutOf(args) });
          }
        } catch (err) {
          return errorResult(`Screenshot failed: ${firstLine(err)}`, { status: 'error' });
        }
        if (data.length > BROWSER_LIMITS.maxScreenshotBytes) {
          return errorResult(`The screenshot is ${data.length} bytes, over ${BROWSER_LIMITS.maxScreenshotBytes}: take the viewport only, an element by ref, or type jpeg.`, { status: 'error', bytes: data.length });
        }
        return {
          ...textResult(`Screenshot of ${session.tabId(page)} (${page.url()})${args.ref ? `, element ${args.ref}` : ''}.`, { status: 'ok', targetId: session.tabId(page), bytes: data.length, type }, [
            { type: 'image', data: data.toString('base64'), mimeType: `image/${type}` },
          ]),
          files: [{ name: `screenshot.${type === 'jpeg' ? 'jpg' : 'png'}`, mimeType: `image/${type}`, data }],
        };
      },
      false,
    ),

  act: (args, manager, guard) =>
    onTab(
      manager,
      args,
      async (session, page) => {
        if (!args.kind) return errorResult(`act needs a kind: ${ACT_KINDS.join(', ')}.`, { status: 'error' });
        const since = Date.now();
        const done = await act(session, page, args);
        if (done.isError) return done;
        const after = await checkAfterAction(session, page, since, guard);
        if (after.refused) return errorResult(`Navigation blocked after ${args.kind}: ${after.refused}. The tab was reset to about:blank.`, { status: 'blocked', targetId: session.tabId(page) });
        const text = (done.content[0] as { text: string }).text;
        return textResult(`${text}\n${wrapUntrusted(`browser:${page.url()}`, await pageLabel(session, page))}${blockedNote(after.blocked)}`, {
          ...(done.details as object),
          url: page.url(),
          blocked: after.blocked.length,
        });
      },
      false,
    ),
};

/**
 * browser: drives a Chromium per browser profile — open and navigate under the SSRF guard,
 * read pages as role snapshots (wrapped as untrusted), act on elements by snapshot ref, take
 * screenshots. Refused while `browser.enabled` is false.
 */
export function createBrowserTool(deps: BrowserToolDeps): ToolImplementation<BrowserArgs> {
  const { manager } = deps;
  return {
    id: 'browser',
    parameters: browserParameters,
    async execute(args, ctx) {
      if (!manager.config.browser.enabled) return errorResult('The browser is disabled on this Warden (browser.enabled: false).', { status: 'disabled' });
      if (ctx.signal.aborted) return errorResult('Cancelled before the browser acted.', { status: 'cancelled' });
      const handler = Object.hasOwn(handlers, args.action) ? handlers[args.action] : undefined;
      if (!handler) return errorResult(`Unknown action "${String(args.action)}": use ${BROWSER_ACTIONS.join(', ')}.`, { status: 'error' });
      const guard: GuardContext = { policy: urlPolicyFor(manager.config, 'browser'), resolve: manager.resolve };
      return handler(args, manager, guard);
    },
  };
}

/** The registry's factory: one manager (and so one Chromium per profile) for the process. */
export function browserToolForRuntime(runtime: { config: WardenConfig; baseDir: string }): ToolImplementation<BrowserArgs> {
  const dataDir = resolveDataDir({ configDataDir: runtime.config.dataDir, env: process.env, cwd: runtime.baseDir });
  return createBrowserTool({ manager: new BrowserManager({ config: runtime.config, dataDir }) });
}
