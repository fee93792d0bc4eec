// The web chat in real Chromium: the page, the WebSocket, the gateway, the approval service
// and SQLite are all real; only the model is absent (commands work without one).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/gateway/startup.js';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

let browser: Browser;
let warden: RunningWarden;
let page: Page;

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-webchat-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), tools: { profile: 'coding', exec: { host: 'gateway' } }, channels: { web: { port: 0 } } });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {} });
  if (!started.ok) throw started.error;
  warden = started.warden;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  page = await browser.newPage();
  // The address `warden start` prints: the token once in the query, then a cookie.
  await page.goto(warden.webOpenUrl!);
  expect(page.url()).toBe(warden.webUrl);
  await page.locator('#status[data-state="open"]').waitFor();
});

afterAll(async () => {
  await browser?.close();
  await warden?.stop();
});

async function say(text: string) {
  await page.locator('#input').fill(text);
  await page.keyboard.press('Enter');
}

describe('web chat in Chromium without the token', () => {
  it('a tab without the token gets 401, no page script and no WebSocket', async () => {
    const stranger = await browser.newContext();
    try {
      const tab = await stranger.newPage();
      const sockets: string[] = [];
      tab.on('websocket', (ws) => sockets.push(ws.url()));
      const response = await tab.goto(warden.webUrl!);
      expect(response?.status()).toBe(401);
      expect(await tab.locator('#composer').count()).toBe(0);
      // A script of its own on the page's origin cannot open the socket or read the assets either.
      const probe = await tab.evaluate(async () => {
        const ws = await new Promise<string>((resolve) => {
          const socket = new WebSocket(`ws://${location.host}/ws`);
          socket.onopen = () => resolve('open');
          socket.onerror = () => resolve('refused');
        });
        const script = (await fetch('/app.js')).status;
        const health = (await fetch('/healthz')).status;
        const wrong = (await fetch('/?token=wrong')).status;
        return { ws, script, health, wrong };
      });
      expect(probe).toEqual({ ws: 'refused', script: 401, health: 401, wrong: 401 });
      expect(await stranger.cookies()).toEqual([]);
    } finally {
      await stranger.close();
    }
  });
});

describe('web chat in Chromium', () => {
  it('sends a message and shows the answer', async () => {
    await say('/tools');
    await expect.poll(() => page.locator('.msg.user').last().textContent()).toBe('/tools');
    await page.locator('.msg.bot', { hasText: 'Your tools here' }).waitFor();

    await say('hello there');
    await page.locator('.msg.bot', { hasText: 'No model is configured' }).waitFor();
  });

  it('/exec raises an approval card; a click on Allow once runs the command and shows its output', async () => {
    await say('/exec echo hello-from-exec');
    const card = page.locator('section.card[data-status="pending"]');
    await card.waitFor();
    expect(await card.locator('pre').textContent()).toBe('echo hello-from-exec');
    expect(await card.locator('button').allTextContents()).toContain('Allow once');

    await card.locator('button[data-decision="allow-once"]').click();
    const done = page.locator('section.card[data-status="allow-once"]');
    await done.waitFor();
    expect(await done.locator('.outcome').textContent()).toBe('Allowed once by you');
    expect(await done.locator('button').count()).toBe(0);
    await page.locator('.msg.bot pre', { hasText: 'hello-from-exec' }).waitFor();
  });

  it('Deny on a card runs nothing and says so', async () => {
    await say('/exec echo never-printed');
    const card = page.locator('section.card[data-status="pending"]');
    await card.waitFor();
    await card.locator('button[data-decision="deny"]').click();
    await page.locator('section.card[data-status="deny"]').waitFor();
    await expect.poll(() => page.locator('.msg.bot').last().textContent()).toMatch(/denied/i);
    expect(await page.locator('.msg.bot pre', { hasText: 'never-printed' }).count()).toBe(0);
  });

  it('/stop aborts a running command', async () => {
    await say('/exec sleep 30');
    const card = page.locator('section.card[data-status="pending"]');
    await card.waitFor();
    await card.locator('button[data-decision="allow-once"]').click();
    await page.locator('section.card[data-status="allow-once"]').nth(1).waitFor();
    await page.locator('#typing:not([hidden])').waitFor();
    await say('/stop');
    await page.locator('.msg.bot', { hasText: 'Stopped the running turn.' }).waitFor();
    await page.locator('#typing[hidden]').waitFor({ state: 'attached' });
    await page.locator('.msg.bot', { hasText: 'aborted' }).waitFor();
  });

  it('a reloaded page shows the conversation and the card in its final state', async () => {
    await page.reload();
    await page.locator('#status[data-state="open"]').waitFor();
    await page.locator('.msg.bot', { hasText: 'No model is configured' }).waitFor();
    expect(await page.locator('section.card .outcome').allTextContents()).toEqual(['Allowed once by you', 'Denied by you', 'Allowed once by you']);
    expect(await page.locator('section.card button').count()).toBe(0);
  });
});
