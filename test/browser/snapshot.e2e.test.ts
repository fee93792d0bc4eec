// The role snapshot against real Chromium: small pages, the worked example of the reference,
// refs resolving back to the right element, and the web-page fixtures. One Chromium for the
// file; every network request is aborted (pages come from setContent).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locatorForRef, snapshotPage } from '../../src/browser/page-snapshot.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../src/browser/session.js';
import { INTERACTIVE_ROLES } from '../../src/browser/roles.js';
import type { TabRefs } from '../../src/browser/session.js';
import { interactiveCoverage } from './coverage.js';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/web-pages');

let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS] });
  page = await browser.newPage();
  await page.route('**/*', (route) => route.abort());
});
afterAll(() => browser?.close());

const refsOf = (snap: Awaited<ReturnType<typeof snapshotPage>>): TabRefs => ({ refs: snap.refs });

const SHOP_HTML = `<header><h1>Example Shop</h1><nav aria-label="Main"><ul><li><a href="/">Home</a></li><li><a href="/cart">Cart</a></li></ul></nav></header>
<main><div role="group"><input aria-label="Search"><button>Go</button></div>
<ul><li>Widget A</li><li><button onclick="this.dataset.hit=1">Add to cart</button></li><li><button onclick="this.dataset.hit=1">Add to cart</button></li></ul>
<p>Free shipping</p><input type="checkbox" aria-label="Subscribe" checked></main>`;

describe('role snapshot in Chromium', () => {
  it('reproduces the worked example (D4) from a real page', async () => {
    await page.setContent(SHOP_HTML);
    const snap = await snapshotPage(page, {});
    expect(snap.aria.split('\n')[0]).toBe('- banner:');
    expect(snap.snapshot).toContain('  - heading "Example Shop" [ref=e1] [level=1]');
    expect(snap.snapshot).toContain('      - button "Add to cart" [ref=e8] [nth=1]');
    expect(snap.snapshot).toContain('  - checkbox "Subscribe" [ref=e9] [checked]');
    const interactive = await snapshotPage(page, { interactive: true });
    expect(interactive.snapshot).toBe(
      ['- link "Home" [ref=e1]', '- link "Cart" [ref=e2]', '- textbox "Search" [ref=e3]', '- button "Go" [ref=e4]', '- button "Add to cart" [ref=e5]', '- button "Add to cart" [ref=e6] [nth=1]', '- checkbox "Subscribe" [ref=e7] [checked]'].join('\n'),
    );
    expect((await snapshotPage(page, { interactive: true, compact: true, maxDepth: 2 })).snapshot).toBe(
      '- textbox "Search" [ref=e1]\n- button "Go" [ref=e2]\n- checkbox "Subscribe" [ref=e3] [checked]',
    );
  });

  it.each([
    ['link', '<a href="/x">Docs</a>', 'link'],
    ['button', '<button>Save</button>', 'button'],
    ['text input', '<label>Name <input></label>', 'textbox'],
    ['unnamed text input', '<input>', 'textbox'],
    ['textarea', '<textarea aria-label="Notes"></textarea>', 'textbox'],
    ['select', '<select aria-label="Size"><option>S</option><option>M</option></select>', 'combobox'],
    ['multi-select', '<select multiple aria-label="Tags"><option>a</option></select>', 'listbox'],
    ['checkbox', '<input type="checkbox" aria-label="Agree">', 'checkbox'],
    ['radio', '<input type="radio" name="r" aria-label="One">', 'radio'],
    ['search', '<input type="search" aria-label="Find">', 'searchbox'],
    ['range', '<input type="range" aria-label="Volume">', 'slider'],
    ['number', '<input type="number" aria-label="Count">', 'spinbutton'],
    ['switch', '<div role="switch" aria-checked="false" tabindex="0" aria-label="Dark mode"></div>', 'switch'],
    ['tab', '<div role="tablist"><div role="tab">General</div></div>', 'tab'],
    ['menuitem', '<div role="menu"><div role="menuitem">Copy</div></div>', 'menuitem'],
  ])('a %s gets a ref (%s → %s)', async (_name, html, role) => {
    await page.setContent(`<main>${html}</main>`);
    for (const options of [{}, { compact: true }, { interactive: true }]) {
      const snap = await snapshotPage(page, options);
      const refs = Object.entries(snap.refs).filter(([, r]) => r.role === role);
      expect(refs.length, JSON.stringify(options)).toBeGreaterThanOrEqual(1);
      const found = locatorForRef(page, refsOf(snap), refs[0]![0]);
      expect(found.ok && (await found.locator.count())).toBe(1);
    }
  });

  it('duplicates get nth and each ref clicks its own element', async () => {
    await page.setContent(`<ul>${[1, 2, 3].map((i) => `<li><button data-i="${i}" onclick="this.dataset.hit=1">Delete</button></li>`).join('')}</ul>`);
    const snap = await snapshotPage(page, { interactive: true });
    expect(snap.snapshot).toBe('- button "Delete" [ref=e1]\n- button "Delete" [ref=e2] [nth=1]\n- button "Delete" [ref=e3] [nth=2]');
    const third = locatorForRef(page, refsOf(snap), 'e3');
    if (!third.ok) throw new Error(third.error);
    await third.locator.click();
    expect(await page.locator('button[data-hit]').getAttribute('data-i')).toBe('3');
  });

  it('types into an unnamed textbox by ref without touching the named one', async () => {
    await page.setContent('<input aria-label="Email"><input id="a"><input id="b">');
    const snap = await snapshotPage(page, {});
    expect(snap.snapshot).toBe('- textbox "Email" [ref=e1]\n- textbox [ref=e2]\n- textbox [ref=e3] [nth=1]');
    const second = locatorForRef(page, refsOf(snap), '@e3');
    if (!second.ok) throw new Error(second.error);
    await second.locator.fill('typed');
    expect(await page.locator('#b').inputValue()).toBe('typed');
    expect(await page.locator('#a').inputValue()).toBe('');
  });

  it('compact keeps every ref of the full snapshot in fewer characters; maxDepth cuts deeper lines', async () => {
    await page.setContent(`<div><div><section aria-label="Filters"><div role="group"><ul><li><label><input type="checkbox"> New</label></li><li><a href="#">Reset</a></li></ul></div></section></div></div><table><tr><td>a</td></tr></table>`);
    const full = await snapshotPage(page, {});
    const compact = await snapshotPage(page, { compact: true });
    expect(compact.refs).toEqual(full.refs);
    expect(compact.snapshot.length).toBeLessThan(full.snapshot.length);
    expect(compact.snapshot).not.toMatch(/^\s*- (group|list|table|rowgroup|row):/m);
    const shallow = await snapshotPage(page, { maxDepth: 0 });
    expect(shallow.snapshot.split('\n').every((line) => !line.startsWith(' '))).toBe(true);
  });

  it('scopes a snapshot to a selector, and its refs resolve inside that part', async () => {
    await page.setContent('<div id="a"><button>OK</button></div><div id="b"><button>OK</button></div>');
    const snap = await snapshotPage(page, { selector: '#b' });
    expect(snap.snapshot).toBe('- button "OK" [ref=e1]');
    const found = locatorForRef(page, { refs: snap.refs, selector: '#b' }, 'e1');
    if (!found.ok) throw new Error(found.error);
    expect(await found.locator.evaluate((el) => el.parentElement!.id)).toBe('b');
  });

  it('refuses refs the last snapshot did not issue', async () => {
    await page.setContent('<button>A</button>');
    const snap = await snapshotPage(page, {});
    expect(locatorForRef(page, refsOf(snap), 'e9')).toEqual({ ok: false, error: expect.stringContaining('Unknown ref e9') });
    expect(locatorForRef(page, refsOf(snap), 'button')).toEqual({ ok: false, error: expect.stringContaining('Invalid ref') });
  });

  it.each(['001', 'mozilla-1', 'lwn-1'])('fixture %s: most visible interactive elements get a ref; the interactive snapshot is a fraction of the HTML', async (name) => {
    const html = readFileSync(path.join(fixtures, name, 'source.html'), 'utf8');
    await page.setContent(html, { waitUntil: 'domcontentloaded' });
    const snap = await snapshotPage(page, { compact: true });
    const coverage = await interactiveCoverage(page, snap.refs);
    expect(coverage.elements).toBeGreaterThan(5);
    expect(coverage.reachable / coverage.elements).toBeGreaterThan(0.9);
    // The full text of the page stays in a compact snapshot; the interactive one is a fraction of the HTML.
    const interactive = await snapshotPage(page, { interactive: true });
    expect(interactive.snapshot.length).toBeLessThan(html.length / 4);
    expect(Object.values(interactive.refs).every((r) => INTERACTIVE_ROLES.has(r.role))).toBe(true);
    expect(interactive.stats.interactive).toBe(Object.values(snap.refs).filter((r) => INTERACTIVE_ROLES.has(r.role)).length);
    // A page of hundreds of links: a few seconds alone, far more on a loaded two-core machine.
  }, 120_000);
});
