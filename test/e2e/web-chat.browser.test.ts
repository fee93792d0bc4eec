// The web chat in real Chromium: the page, the WebSocket, the gateway, the approval service
// and SQLite are all real; only the model is absent (commands work without one).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalResolution } from '../../src/approvals/types.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/gateway/startup.js';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

let browser: Browser;
let warden: RunningWarden;
let page: Page;

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-webchat-'));
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), channels: { web: { port: 0 } } });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {} });
  if (!started.ok) throw started.error;
  warden = started.warden;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  page = await browser.newPage();
  await page.goto(warden.webUrl!);
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

describe('web chat in Chromium', () => {
  it('sends a message and shows the answer', async () => {
    await say('/tools');
    await expect.poll(() => page.locator('.msg.user').last().textContent()).toBe('/tools');
    await page.locator('.msg.bot', { hasText: 'Your tools here' }).waitFor();

    await say('hello there');
    await page.locator('.msg.bot', { hasText: 'No model is configured' }).waitFor();
  });

  it('shows an approval card and a click on Allow once decides it', async () => {
    const waiting: Promise<ApprovalResolution> = warden.approvals.request(
      { kind: 'exec', tool: 'exec', title: 'Run a command', preview: 'echo hi', fullText: 'echo hi', allowedDecisions: ['allow-once', 'deny'] },
      { agentId: 'main', sessionKey: 'agent:main:web:direct:local', provider: 'web', channelId: 'web', requesterId: 'local' },
    );
    const card = page.locator('section.card[data-status="pending"]');
    await card.waitFor();
    expect(await card.locator('pre').textContent()).toBe('echo hi');
    expect(await card.locator('button').allTextContents()).toEqual(['Allow once', 'Deny']);

    await card.locator('button[data-decision="allow-once"]').click();
    const resolution = await waiting;
    expect(resolution.outcome).toBe('allow-once');
    const done = page.locator(`section.card[data-approval-id="${resolution.id}"]`);
    await expect.poll(() => done.getAttribute('data-status')).toBe('allow-once');
    expect(await done.locator('.outcome').textContent()).toBe('Allowed once by you');
    expect(await done.locator('button').count()).toBe(0);
  });

  it('a reloaded page shows the conversation and the card in its final state', async () => {
    await page.reload();
    await page.locator('#status[data-state="open"]').waitFor();
    await page.locator('.msg.bot', { hasText: 'No model is configured' }).waitFor();
    expect(await page.locator('section.card .outcome').last().textContent()).toBe('Allowed once by you');
  });
});
