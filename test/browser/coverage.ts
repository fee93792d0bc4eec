// How many of a page's visible interactive elements (links, buttons, inputs, selects,
// textareas) a snapshot's refs reach: each interactive ref is resolved the way the tool
// resolves it and marks the element it finds; then the marked elements are counted.
import type { Page } from 'playwright-core';
import { locatorForRef } from '../../src/browser/page-snapshot.js';
import { INTERACTIVE_ROLES } from '../../src/browser/roles.js';
import type { RoleRef } from '../../src/browser/snapshot.js';

const INTERACTIVE = 'a[href], button, input:not([type=hidden]), select, textarea';
const MARK = 'data-warden-reached';

export async function interactiveCoverage(page: Page, refs: Record<string, RoleRef>): Promise<{ elements: number; reachable: number }> {
  // Marked in batches sent together: one round trip after another made a page with hundreds of
  // links take seconds (tens of seconds on a loaded machine). A ref is asked whether it resolves
  // (count() does not wait) and only then marked, with a limit no loaded machine reaches: a short
  // one would count slow answers as unreachable refs.
  const interactive = Object.entries(refs).filter(([, entry]) => INTERACTIVE_ROLES.has(entry.role));
  for (let i = 0; i < interactive.length; i += 32) {
    await Promise.all(
      interactive.slice(i, i + 32).map(async ([ref]) => {
        const found = locatorForRef(page, { refs }, ref);
        if (!found.ok || (await found.locator.count()) === 0) return;
        await found.locator.evaluate((el, mark) => el.setAttribute(mark, ''), MARK, { timeout: 60_000 }).catch(() => undefined);
      }),
    );
  }
  return page.evaluate(
    ({ selector, mark }) => {
      const visible = Array.from(document.querySelectorAll(selector)).filter((el) => (el as HTMLElement).checkVisibility?.() ?? true);
      // A control inside a reached element counts as reached (a button wrapping an input, say).
      const reached = visible.filter((el) => el.closest(`[${mark}]`) !== null || el.querySelector(`[${mark}]`) !== null);
      return { elements: visible.length, reachable: reached.length };
    },
    { selector: INTERACTIVE, mark: MARK },
  );
}
