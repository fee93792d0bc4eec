// The pictures in the README, taken by the suite's own Chromium from a real Warden: the web chat
// as a newcomer first sees it (the welcome card, no model yet) and an exec approval card waiting
// for a click. They are written to docs/img/ when missing or with WARDEN_SCREENSHOTS=update (so a
// test run leaves the checkout clean); every run takes them and checks what they show.
// The same page shows a Markdown table with aligned columns without a CSP complaint.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';

const IMG = fileURLToPath(new URL('../../docs/img/', import.meta.url));
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const VIEWPORT = { width: 960, height: 560 };

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
});

async function boot(config: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<{ warden: RunningWarden; workspace: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-shots-'));
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), tools: { profile: 'coding', exec: { host: 'gateway' } }, channels: { web: { port: 0 } }, ...config });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env });
  if (!started.ok) throw started.error;
  return { warden: started.warden, workspace: path.join(dir, 'workspace') };
}

async function open(warden: RunningWarden): Promise<Page> {
  const page = await browser.newPage({ viewport: VIEWPORT });
  await page.goto(warden.webOpenUrl!);
  await page.locator('#status[data-state="open"]').waitFor();
  return page;
}

/** Writes the README's picture when it is missing or asked for; checks it is a PNG of the viewport either way. */
function keep(name: string, png: Buffer): void {
  expect(png.subarray(1, 4).toString()).toBe('PNG');
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([VIEWPORT.width, VIEWPORT.height]);
  const file = path.join(IMG, name);
  if (!existsSync(file) || process.env.WARDEN_SCREENSHOTS === 'update') {
    mkdirSync(IMG, { recursive: true });
    writeFileSync(file, png);
  }
}

describe('the README screenshots', () => {
  let warden: RunningWarden;
  let workspace: string;
  let page: Page;
  beforeAll(async () => {
    ({ warden, workspace } = await boot({}));
    page = await open(warden);
  });
  afterAll(async () => {
    await page?.close();
    await warden?.stop();
  });

  it('the empty web chat: a welcome card with the model (none yet, and the line to add), the workspace and three commands', async () => {
    const card = page.locator('section.welcome');
    await card.waitFor();
    expect(await card.locator('h2').textContent()).toBe('Welcome to Warden');
    expect(await card.locator('p.model').textContent()).toBe(
      "No model yet: commands work, and to chat add models: { default: anthropic/claude-sonnet-4-5 } to warden.config.yaml and set ANTHROPIC_API_KEY (or another provider's model and key).",
    );
    expect(await card.locator('p.model code').textContent()).toBe('models: { default: anthropic/claude-sonnet-4-5 }');
    expect(await card.locator('p.workspace').textContent()).toBe(`Workspace: ${workspace} — the agent's files; /exec runs there.`);
    expect(await card.locator('li').allTextContents()).toEqual([
      '/help every command',
      '/tools the tools the agent may use here, and why not the others',
      '/exec ls -la a shell command in the workspace (asks you first)',
    ]);
    keep('web-chat-empty.png', await page.screenshot());
    // A click puts the command in the box, ready to send.
    await card.locator('button.try', { hasText: '/help' }).click();
    expect(await page.locator('#input').inputValue()).toBe('/help');
  });

  it('an approval card waiting for a click', async () => {
    await page.locator('#input').fill('/exec ls -la');
    await page.keyboard.press('Enter');
    const card = page.locator('#messages section.card[data-status="pending"]');
    await card.waitFor();
    expect(await card.locator('pre').textContent()).toBe('ls -la');
    expect(await card.locator('button').allTextContents()).toEqual(['Allow once', 'Allow always', 'Deny', 'Deny with reason']);
    keep('approval-card.png', await page.screenshot());
  });
});

describe('a Markdown table in the web chat', () => {
  let model: FakeModelServer;
  let warden: RunningWarden;
  beforeAll(async () => {
    model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: '| item | cost |\n| :--- | ---: |\n| disk | 12 |\n| cpu | 3 |\n\n| c |\n| :---: |\n| mid |' }) });
    ({ warden } = await boot({ models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } } }, { OPENAI_API_KEY: 'test' }));
  });
  afterAll(async () => {
    await warden?.stop();
    await model?.close();
  });

  it('keeps column alignment as classes, with no console error (the CSP refuses inline style)', async () => {
    const page = await open(warden);
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(e.message));
    // With a model, the welcome card names it.
    expect(await page.locator('section.welcome p.model').textContent()).toBe('Model: openai/gpt-test');
    await page.locator('#input').fill('show the costs');
    await page.keyboard.press('Enter');
    const table = page.locator('.msg.bot table').first();
    await table.waitFor();
    const cells = await page.locator('.msg.bot td, .msg.bot th').evaluateAll((els) => els.map((e) => [e.textContent, e.className, e.getAttribute('style'), getComputedStyle(e).textAlign]));
    expect(cells).toEqual([
      ['item', 'align-left', null, 'left'],
      ['cost', 'align-right', null, 'right'],
      ['disk', 'align-left', null, 'left'],
      ['12', 'align-right', null, 'right'],
      ['cpu', 'align-left', null, 'left'],
      ['3', 'align-right', null, 'right'],
      ['c', 'align-center', null, 'center'],
      ['mid', 'align-center', null, 'center'],
    ]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
