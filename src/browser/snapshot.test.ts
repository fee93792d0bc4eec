import { describe, expect, it } from 'vitest';
import { buildRoleSnapshot, parseElementLine, parseRoleRef, truncateSnapshot } from './snapshot.js';

// Reference D4: the worked example, as Playwright prints the shop page.
const SHOP = `- banner:
  - heading "Example Shop" [level=1]
  - navigation "Main":
    - list:
      - listitem:
        - link "Home":
          - /url: /
      - listitem:
        - link "Cart":
          - /url: /cart
- main:
  - group:
    - textbox "Search"
    - button "Go"
  - list:
    - listitem: Widget A
    - listitem:
      - button "Add to cart"
    - listitem:
      - button "Add to cart"
  - paragraph: Free shipping
  - checkbox "Subscribe" [checked]`;

describe('buildRoleSnapshot on the worked example (D4)', () => {
  it('default: refs on interactive and named content lines, every other line unchanged', () => {
    const { snapshot, refs } = buildRoleSnapshot(SHOP);
    expect(snapshot).toBe(`- banner:
  - heading "Example Shop" [ref=e1] [level=1]
  - navigation "Main" [ref=e2]:
    - list:
      - listitem:
        - link "Home" [ref=e3]:
          - /url: /
      - listitem:
        - link "Cart" [ref=e4]:
          - /url: /cart
- main:
  - group:
    - textbox "Search" [ref=e5]
    - button "Go" [ref=e6]
  - list:
    - listitem: Widget A
    - listitem:
      - button "Add to cart" [ref=e7]
    - listitem:
      - button "Add to cart" [ref=e8] [nth=1]
  - paragraph: Free shipping
  - checkbox "Subscribe" [ref=e9] [checked]`);
    expect(refs).toEqual({
      e1: { role: 'heading', name: 'Example Shop' },
      e2: { role: 'navigation', name: 'Main' },
      e3: { role: 'link', name: 'Home' },
      e4: { role: 'link', name: 'Cart' },
      e5: { role: 'textbox', name: 'Search' },
      e6: { role: 'button', name: 'Go' },
      e7: { role: 'button', name: 'Add to cart', nth: 0 },
      e8: { role: 'button', name: 'Add to cart', nth: 1 },
      e9: { role: 'checkbox', name: 'Subscribe' },
    });
  });

  it('interactive: flat lines, refs renumbered, suffix kept only when it holds attributes', () => {
    expect(buildRoleSnapshot(SHOP, { interactive: true }).snapshot).toBe(`- link "Home" [ref=e1]
- link "Cart" [ref=e2]
- textbox "Search" [ref=e3]
- button "Go" [ref=e4]
- button "Add to cart" [ref=e5]
- button "Add to cart" [ref=e6] [nth=1]
- checkbox "Subscribe" [ref=e7] [checked]`);
  });

  it('compact: same refs as default, unnamed structure gone, containers kept only above refs', () => {
    const full = buildRoleSnapshot(SHOP);
    const compact = buildRoleSnapshot(SHOP, { compact: true });
    expect(compact.refs).toEqual(full.refs);
    expect(compact.snapshot).toBe(`- banner:
  - heading "Example Shop" [ref=e1] [level=1]
  - navigation "Main" [ref=e2]:
      - listitem:
        - link "Home" [ref=e3]:
          - /url: /
      - listitem:
        - link "Cart" [ref=e4]:
          - /url: /cart
- main:
    - textbox "Search" [ref=e5]
    - button "Go" [ref=e6]
    - listitem: Widget A
    - listitem:
      - button "Add to cart" [ref=e7]
    - listitem:
      - button "Add to cart" [ref=e8] [nth=1]
  - paragraph: Free shipping
  - checkbox "Subscribe" [ref=e9] [checked]`);
  });

  it('maxDepth 1: only depth 0–1 lines', () => {
    const { snapshot, refs } = buildRoleSnapshot(SHOP, { maxDepth: 1 });
    expect(snapshot).toBe(`- banner:
  - heading "Example Shop" [ref=e1] [level=1]
  - navigation "Main" [ref=e2]:
- main:
  - group:
  - list:
  - paragraph: Free shipping
  - checkbox "Subscribe" [ref=e3] [checked]`);
    expect(Object.keys(refs)).toEqual(['e1', 'e2', 'e3']);
  });

  it('interactive + compact + maxDepth 2', () => {
    expect(buildRoleSnapshot(SHOP, { interactive: true, compact: true, maxDepth: 2 }).snapshot).toBe(`- textbox "Search" [ref=e1]
- button "Go" [ref=e2]
- checkbox "Subscribe" [ref=e3] [checked]`);
  });

  it('counts stats', () => {
    expect(buildRoleSnapshot(SHOP).stats).toMatchObject({ lines: 22, refs: 9, interactive: 7 });
  });
});

describe('buildRoleSnapshot rules', () => {
  it.each([
    // [case, aria, options, expected snapshot]
    ['an unnamed content role gets no ref', '- heading [level=2]\n- listitem: text', {}, '- heading [level=2]\n- listitem: text'],
    ['an unnamed interactive role still gets a ref', '- textbox\n- button', {}, '- textbox [ref=e1]\n- button [ref=e2]'],
    ['roles are compared lower-cased', '- Button "OK"', {}, '- Button "OK" [ref=e1]'],
    ['a named structural line stays in compact mode', '- group "Filters":\n  - checkbox "New"', { compact: true }, '- group "Filters":\n  - checkbox "New" [ref=e1]'],
    ['a container without refs below disappears in compact mode', '- banner:\n  - img "Logo"\n- button "A"', { compact: true }, '- button "A" [ref=e1]'],
    ['text lines stay in compact mode', '- paragraph: Hello\n- text: world', { compact: true }, '- paragraph: Hello\n- text: world'],
    ['nothing interactive', '- paragraph: Hello', { interactive: true }, '(no interactive elements)'],
    ['empty page', '', {}, '(empty)'],
    ['YAML-quoted keys keep their full name', `- 'button "Save: now"'\n- 'link "it''s #1"':\n  - /url: "#x"`, {}, '- button "Save: now" [ref=e1]\n- link "it\'s #1" [ref=e2]:\n  - /url: "#x"'],
    ['escaped quotes stay escaped in the text', '- button "Say \\"hi\\""', {}, '- button "Say \\"hi\\"" [ref=e1]'],
    ['value suffixes are dropped in interactive mode', '- slider "Vol": "50"\n- textbox "Notes": hi', { interactive: true }, '- slider "Vol" [ref=e1]\n- textbox "Notes" [ref=e2]'],
  ] as const)('%s', (_case, aria, options, expected) => {
    expect(buildRoleSnapshot(aria, options).snapshot).toBe(expected);
  });

  it('names are unescaped in the ref map, as getByRole needs them', () => {
    const { refs } = buildRoleSnapshot(`- button "Say \\"hi\\""\n- 'link "it''s"'`);
    expect(refs).toEqual({ e1: { role: 'button', name: 'Say "hi"' }, e2: { role: 'link', name: "it's" } });
  });

  it('duplicates get nth per (role, name); unnamed elements are their own key', () => {
    const { snapshot, refs } = buildRoleSnapshot('- textbox\n- textbox "Name"\n- textbox\n- link "x"\n- button "x"');
    expect(snapshot).toBe('- textbox [ref=e1]\n- textbox "Name" [ref=e2]\n- textbox [ref=e3] [nth=1]\n- link "x" [ref=e4]\n- button "x" [ref=e5]');
    expect(refs.e1).toEqual({ role: 'textbox', nth: 0 });
    expect(refs.e3).toEqual({ role: 'textbox', nth: 1 });
    expect(refs.e2).toEqual({ role: 'textbox', name: 'Name' });
  });

  it('nth counts duplicates that maxDepth hides, so it matches what the page holds', () => {
    const aria = '- list:\n  - listitem:\n    - button "More"\n- button "More"';
    const { snapshot, refs } = buildRoleSnapshot(aria, { maxDepth: 0 });
    expect(snapshot).toBe('- list:\n- button "More" [ref=e1] [nth=1]');
    expect(refs.e1).toEqual({ role: 'button', name: 'More', nth: 1 });
  });

  it('refs are renumbered per snapshot', () => {
    const first = buildRoleSnapshot('- button "A"\n- button "B"');
    const second = buildRoleSnapshot('- button "B"');
    expect(first.refs.e2).toEqual({ role: 'button', name: 'B' });
    expect(second.refs).toEqual({ e1: { role: 'button', name: 'B' } });
  });
});

describe('parseElementLine', () => {
  it.each([
    ['  - heading "T" [level=2]', { depth: 1, prefix: '  - ', role: 'heading', quotedName: 'T', name: 'T', suffix: ' [level=2]' }],
    ['- paragraph: text: with colon', { depth: 0, role: 'paragraph', suffix: ': text: with colon' }],
    ["- 'button \"a: b\"' [disabled]", { role: 'button', name: 'a: b', suffix: ' [disabled]' }],
  ])('%s', (line, expected) => {
    expect(parseElementLine(line)).toMatchObject(expected);
  });

  it.each(['  - /url: /x', 'plain text', '- "quoted only"'])('%s is not an element line', (line) => {
    expect(parseElementLine(line)).toBeUndefined();
  });

  it.each(['- button "x"', '  -   link "y"', '- ', '-  ', '-\t\t', '- text\u2028more', '-   \u2028', '- a\rb', '--', ' - x '])(
    '%j splits into prefix and rest as /^(\\s*-\\s+)(.*)$/ does',
    (line) => {
      const former = /^(\s*-\s+)(.*)$/.exec(line);
      const parsed = parseElementLine(line);
      if (former === null) expect(parsed).toBeUndefined();
      else if (parsed) expect(parsed.prefix).toBe(former[1]);
    },
  );

  it('returns at once on a line of 100,000 spaces ending in a line separator', () => {
    expect(parseElementLine(`- ${' '.repeat(100_000)}x\u2028`)).toBeUndefined();
  });
});

describe('parseRoleRef', () => {
  it.each([
    ['e1', 'e1'],
    ['E12', 'e12'],
    ['@e3', 'e3'],
    ['ref=e4', 'e4'],
    [' e5 ', 'e5'],
    ['e0', undefined],
    ['12', undefined],
    ['button', undefined],
    ['e1234567890', undefined],
    ['#e1', undefined],
  ])('%s → %s', (text, expected) => {
    expect(parseRoleRef(text)).toBe(expected);
  });
});

describe('truncateSnapshot', () => {
  it('cuts on a line boundary and says so', () => {
    const text = '- button "A" [ref=e1]\n- button "B" [ref=e2]\n- button "C" [ref=e3]';
    const cut = truncateSnapshot(text, 30);
    expect(cut.truncated).toBe(true);
    expect(cut.text.startsWith('- button "A" [ref=e1]\n[...TRUNCATED')).toBe(true);
    expect(truncateSnapshot(text, 1000)).toEqual({ text, truncated: false });
  });
});
