import type { Page, Response } from 'playwright-core';
import { checkUrlWithPolicy, type Resolver, type UrlPolicy } from '../net/index.js';
import type { BlockedRequest } from './guard-proxy.js';
import type { BrowserSession } from './session.js';

/**
 * Navigation under the guard (reference B8), in three layers:
 * 1. before: the URL the model gave is checked here — only http(s) and about:blank, and the
 *    host under `browser.ssrfPolicy` — so file:, javascript:, data:, chrome: and private
 *    targets never reach Chromium;
 * 2. during: every request, each redirect hop included, passes the guard proxy, which refuses
 *    a blocked host before anything is sent;
 * 3. after: the redirect chain (oldest first) and the final URL are checked again; a tab that
 *    ends on a refused or non-web URL is sent to about:blank.
 */
export interface GuardContext {
  policy: UrlPolicy;
  resolve?: Resolver | undefined;
}

export type NavigationResult =
  | { ok: true; url: string; status?: number | undefined; redirects: string[]; blocked: BlockedRequest[] }
  | { ok: false; blocked: boolean; error: string; url?: string | undefined };

export const NAVIGATION_TIMEOUT_MS = 30_000;

/** Checks a URL the browser is to load or has loaded; about:blank is always fine. */
export async function checkBrowserUrl(url: string, guard: GuardContext): Promise<{ allowed: boolean; reason: string }> {
  return checkUrlWithPolicy(url, 'browser', guard.policy, guard.resolve);
}

const describeBlocked = (blocked: BlockedRequest[]) => blocked.map((b) => `${b.url} (${b.reason})`).join('; ');

/** The URLs a response's request was redirected through, oldest first, ending with its own. */
function redirectChain(response: Response | null): string[] {
  const chain: string[] = [];
  for (let request = response?.request() ?? null; request; request = request.redirectedFrom()) chain.unshift(request.url());
  return chain;
}

/**
 * Loads a URL in a tab under the guard. `go` performs the navigation (goto by default; goBack
 * for `back`); with it, `url` may be undefined and only layers 2 and 3 apply.
 */
export async function navigateGuarded(
  session: BrowserSession,
  page: Page,
  url: string | undefined,
  guard: GuardContext,
  go: (page: Page) => Promise<Response | null> = (p) => p.goto(url!, { waitUntil: 'domcontentloaded', timeout: NAVIGATION_TIMEOUT_MS }),
): Promise<NavigationResult> {
  if (url !== undefined) {
    const verdict = await checkBrowserUrl(url, guard);
    if (!verdict.allowed) return { ok: false, blocked: true, error: `Navigation blocked: ${verdict.reason}`, url };
  }
  const since = Date.now();
  let response: Response | null = null;
  let failure: string | undefined;
  try {
    response = await go(page);
    // The document is there; images and scripts get a moment more, but a slow one is no failure.
    await page.waitForLoadState('load', { timeout: 5_000 }).catch(() => undefined);
  } catch (err) {
    failure = (err as Error).message.split('\n')[0];
  }
  const blocked = session.blockedSince(since);
  const final = page.url();
  const mainBlocked = response?.headers()['x-warden-blocked'] === '1';

  if (failure !== undefined || mainBlocked || final.startsWith('chrome-error://')) {
    await leave(page, final);
    if (blocked.length > 0) return { ok: false, blocked: true, error: `Navigation blocked by the browser guard: ${describeBlocked(blocked)}`, url: final };
    return { ok: false, blocked: false, error: `Navigation failed: ${failure ?? `could not load ${url ?? final}`}`, url: final };
  }

  const chain = redirectChain(response);
  for (const hop of [...chain, final]) {
    const verdict = await checkBrowserUrl(hop, guard);
    if (!verdict.allowed) {
      await leave(page, final);
      return { ok: false, blocked: true, error: `Navigation blocked: ${hop === final ? 'the page ended on' : 'a redirect went through'} ${hop}: ${verdict.reason}`, url: hop };
    }
  }
  return { ok: true, url: final, status: response?.status(), redirects: chain.slice(1), blocked };
}

/**
 * After an action that may have navigated (click, press, submit): waits briefly for the load,
 * then checks where the tab is. Returns the refusal when the tab had to be sent to about:blank.
 */
export async function checkAfterAction(session: BrowserSession, page: Page, since: number, guard: GuardContext): Promise<{ blocked: BlockedRequest[]; refused?: string }> {
  await page.waitForLoadState('domcontentloaded', { timeout: 5_000 }).catch(() => undefined);
  const blocked = session.blockedSince(since);
  const final = page.url();
  if (final.startsWith('chrome-error://')) {
    await leave(page, final);
    return { blocked, refused: blocked.length > 0 ? `the page tried to load ${describeBlocked(blocked)}` : 'the page failed to load' };
  }
  const verdict = await checkBrowserUrl(final, guard);
  if (!verdict.allowed) {
    await leave(page, final);
    return { blocked, refused: `the page went to ${final}: ${verdict.reason}` };
  }
  return { blocked };
}

/** Leaves a refused or failed page so nothing of it stays readable in the tab. */
async function leave(page: Page, current: string): Promise<void> {
  if (current === 'about:blank') return;
  await page.goto('about:blank', { timeout: 5_000 }).catch(() => undefined);
}
