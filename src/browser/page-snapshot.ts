import type { Locator, Page } from 'playwright-core';
import { buildRoleSnapshot, parseRoleRef, type RoleSnapshot, type RoleSnapshotOptions } from './snapshot.js';
import type { TabRefs } from './session.js';

/** Reference D5: a snapshot waits at most 20 s. */
export const SNAPSHOT_TIMEOUT_MS = 20_000;

export interface SnapshotScope {
  /** CSS selector of the part of the page to snapshot (the first match). */
  selector?: string | undefined;
  /** CSS selector of an iframe whose document is snapshotted instead of the page. */
  frame?: string | undefined;
}

type Scope = Page | ReturnType<Page['frameLocator']>;

const scopeOf = (page: Page, frame: string | undefined): Scope => (frame ? page.frameLocator(frame) : page);

function rootOf(page: Page, scope: SnapshotScope): Locator {
  return scopeOf(page, scope.frame)
    .locator(scope.selector ?? 'body')
    .first();
}

/** Takes the role snapshot of a tab (or part of it) from Playwright's ARIA snapshot. */
export async function snapshotPage(page: Page, options: RoleSnapshotOptions & SnapshotScope): Promise<RoleSnapshot & { aria: string }> {
  const aria = await rootOf(page, options).ariaSnapshot({ timeout: SNAPSHOT_TIMEOUT_MS });
  return { ...buildRoleSnapshot(aria, options), aria };
}

/**
 * Resolves a ref of the tab's last snapshot to a locator: `getByRole(role, {name, exact})`
 * (an unnamed element matches the empty name) then `.nth(nth)`, inside the same selector and
 * frame the snapshot was taken in (reference D3).
 */
export function locatorForRef(page: Page, tabRefs: TabRefs | undefined, text: string): { ok: true; locator: Locator; ref: string } | { ok: false; error: string } {
  const ref = parseRoleRef(text);
  if (!ref) return { ok: false, error: `Invalid ref "${text}": use a ref from the last snapshot, like e12.` };
  const entry = tabRefs?.refs[ref];
  if (!entry) return { ok: false, error: `Unknown ref ${ref} for this tab. Run a new snapshot and use one of its refs.` };
  const scope = scopeOf(page, tabRefs!.frame);
  const base = tabRefs!.selector ? scope.locator(tabRefs!.selector).first() : scope;
  const locator = base.getByRole(entry.role as Parameters<Page['getByRole']>[0], { name: entry.name ?? '', exact: true }).nth(entry.nth ?? 0);
  return { ok: true, locator, ref };
}
