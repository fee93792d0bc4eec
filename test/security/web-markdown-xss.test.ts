// Model text rendered as Markdown in the web chat, attacked as a prompt-injected model would:
// every payload of the corpus is posted as a bot reply into the real page in Chromium, and
// nothing may run, load or link anywhere but http(s)/mailto. The page also has a strict CSP;
// these checks hold without relying on it (the DOM itself carries no script, handler or
// dangerous URL).
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebAdapter, type WebAdapter } from '../../adapters/web/index.js';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const TOKEN = 'xss-corpus-token-0123456789abcdef';

const CORPUS: Array<[string, string]> = [
  ['a script tag', '<script>window.__xss = 1</script>'],
  ['an img onerror', '<img src=x onerror="window.__xss = 2">'],
  ['an svg onload', '<svg onload="window.__xss = 3"></svg>'],
  ['an iframe srcdoc', '<iframe srcdoc="<script>parent.__xss = 4</script>"></iframe>'],
  ['a javascript: link', '[click me](javascript:window.__xss=5)'],
  ['a javascript: link, mixed case and entities', '[x](JaVaScRiPt&#58;window.__xss=6)'],
  ['a javascript: link with a tab', '[x](java\tscript:window.__xss=7)'],
  ['a vbscript: link', '[x](vbscript:msgbox(1))'],
  ['a data: link', '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
  ['a file: link', '[x](file:///etc/passwd)'],
  ['an image with a javascript: src', '![x](javascript:window.__xss=8)'],
  ['an image with a remote src (tracking)', '![pixel](https://attacker.test/p.gif)'],
  ['an autolink to javascript:', '<javascript:window.__xss=9>'],
  ['a reference link', '[x][evil]\n\n[evil]: javascript:window.__xss=10'],
  ['html in a link label', '[<img src=x onerror=window.__xss=11>](https://ok.test)'],
  ['an attribute breakout in a link title', '[x](https://ok.test "a\\" onmouseover=\\"window.__xss=12")'],
  ['inline event in raw html block', '<div onclick="window.__xss=13">click</div>'],
  ['a style tag', '<style>body{display:none}</style>'],
  ['a form', '<form action="https://attacker.test"><input name=q></form>'],
  ['a meta refresh', '<meta http-equiv="refresh" content="0;url=https://attacker.test">'],
  ['a base tag', '<base href="https://attacker.test/">'],
  ['an object tag', '<object data="javascript:window.__xss=14"></object>'],
  ['html entities smuggling a tag', '&lt;script&gt;window.__xss=15&lt;/script&gt;'],
  ['a code span holding a tag', '`<script>window.__xss=16</script>`'],
  ['a fenced block holding a tag', '```html\n<script>window.__xss=17</script>\n```'],
  ['a table cell holding a tag', '| a |\n| - |\n| <img src=x onerror=window.__xss=18> |'],
  ['a linkified javascript: URL', 'see javascript:window.__xss=19 now'],
  ['a protocol-relative link', '[x](//attacker.test/x)'],
];

let browser: Browser;
let adapter: WebAdapter;
let page: Page;
const dialogs: string[] = [];
const outside: string[] = [];

beforeAll(async () => {
  adapter = createWebAdapter({ host: '127.0.0.1', port: 0, token: undefined }, { token: TOKEN, onApprovalClick: async () => ({ kind: 'not-found' }) });
  await adapter.start(async () => undefined);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  page = await browser.newPage();
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('request', (r) => {
    if (!r.url().startsWith(adapter.url!)) outside.push(r.url());
  });
  await page.goto(adapter.openUrl!);
  await page.locator('#status[data-state="open"]').waitFor();
});

afterAll(async () => {
  await browser?.close();
  await adapter?.stop();
});

async function shown(text: string) {
  const marker = `m${Math.random().toString(36).slice(2)}`;
  await adapter.send({ provider: 'web', channelId: 'web' }, { text: `${text}\n\n${marker}` });
  const bubble = page.locator('.msg.bot', { hasText: marker });
  await bubble.waitFor();
  return bubble;
}

describe('the web chat renders model Markdown without running or linking anything dangerous', () => {
  it.each(CORPUS)('%s', async (_name, payload) => {
    const bubble = await shown(payload);
    const dom = await bubble.evaluate((el) => ({
      tags: Array.from(el.querySelectorAll('*'), (e) => e.tagName),
      handlers: Array.from(el.querySelectorAll('*')).flatMap((e) => Array.from(e.attributes, (a) => a.name).filter((n) => n.startsWith('on') || n === 'style' || n === 'srcdoc' || n === 'src')),
      hrefs: Array.from(el.querySelectorAll('[href]'), (e) => e.getAttribute('href') ?? ''),
      xss: (window as unknown as { __xss?: number }).__xss,
    }));
    expect(dom.tags.filter((t) => ['SCRIPT', 'IMG', 'SVG', 'IFRAME', 'STYLE', 'FORM', 'INPUT', 'META', 'BASE', 'OBJECT', 'EMBED', 'DIV'].includes(t))).toEqual([]);
    expect(dom.handlers).toEqual([]);
    for (const href of dom.hrefs) expect(href).toMatch(/^(https?:|mailto:)/);
    expect(dom.xss).toBeUndefined();
    await page.waitForTimeout(20);
    expect(dialogs).toEqual([]);
    expect(outside).toEqual([]);
  });

  it('renders the Markdown people expect: bold, lists, code, tables, safe links', async () => {
    const bubble = await shown('**bold** and *it*\n\n- one\n- two\n\n`code`\n\n```\nblock\n```\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n[docs](https://example.com/docs)');
    const html = await bubble.evaluate((el) => ({
      strong: el.querySelector('strong')?.textContent,
      em: el.querySelector('em')?.textContent,
      items: Array.from(el.querySelectorAll('li'), (li) => li.textContent),
      code: el.querySelector('p code')?.textContent,
      pre: el.querySelector('pre')?.textContent,
      cells: Array.from(el.querySelectorAll('td'), (td) => td.textContent),
      link: (() => {
        const a = el.querySelector('a');
        return a && { href: a.getAttribute('href'), rel: a.getAttribute('rel'), target: a.getAttribute('target') };
      })(),
    }));
    expect(html).toEqual({
      strong: 'bold',
      em: 'it',
      items: ['one', 'two'],
      code: 'code',
      pre: 'block',
      cells: ['1', '2'],
      link: { href: 'https://example.com/docs', rel: 'noopener noreferrer nofollow', target: '_blank' },
    });
  });
});
