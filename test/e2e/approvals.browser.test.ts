// The web chat in real Chromium with a scripted model (the OpenAI-compatible fake through the
// real SDK): a card waits, the page keeps answering, and after the click the output appears
// under the card and the agent finishes its task.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWarden } from '../../src/app/startup.js';
import { openWebChat, sayIn } from './web-chat-page.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { COMMAND, LIST_REQUEST, respond } from './approvals-model.js';


let browser: Browser;
let warden: RunningWarden;
let model: FakeModelServer;
let page: Page;
let dir: string;

beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
  dir = mkdtempSync(path.join(tmpdir(), 'warden-approvals-web-'));
  mkdirSync(path.join(dir, 'workspace'));
  writeFileSync(path.join(dir, 'workspace', 'notes.md'), '# notes\n');
  writeFileSync(path.join(dir, 'workspace', 'plan.txt'), 'plan\n');
  ({ warden, browser, page } = await openWebChat({
    dir,
    modelUrl: model.url,
    config: {
      approvals: { waitSec: 0 },
      tools: { profile: 'coding', exec: { host: 'gateway' } },
    },
  }));
});

afterAll(async () => {
  await browser?.close();
  await warden?.stop();
  await model?.close();
});

const say = (text: string) => sayIn(page, text);

describe('web chat: an approval that never holds the conversation', () => {
  it('the card waits while the page keeps answering; after Allow once the output is under the card and the agent finishes', async () => {
    await say(LIST_REQUEST);
    const card = page.locator('section.card[data-status="pending"]');
    await card.waitFor();
    expect(await card.locator('pre').textContent()).toBe(COMMAND);
    expect(await card.locator('dd').allTextContents()).toContain('the agent for you');
    await page.locator('.msg.bot', { hasText: 'waits for an approval' }).waitFor();

    const sentAt = performance.now();
    await say('ping');
    await page.locator('.msg.bot', { hasText: 'pong' }).waitFor();
    expect(performance.now() - sentAt).toBeLessThan(1_000);

    await say('/approvals');
    await page.locator('.msg.bot', { hasText: 'Pending approvals here (1)' }).waitFor();

    await card.locator('button[data-decision="allow-once"]').click();
    await page.locator('section.card[data-status="allow-once"]').waitFor();
    // The output is right under its card, before anything said later.
    const id = await page.locator('section.card').first().getAttribute('data-approval-id');
    const result = page.locator(`section.card[data-approval-id="${id}"] + .msg.under-card[data-approval-id="${id}"]`);
    await result.waitFor();
    expect(await result.locator('pre').textContent()).toBe('notes.md\nplan.txt\n\n(exit code 0)');
    await page.locator('.msg.bot', { hasText: 'Done: the workspace holds notes.md and plan.txt.' }).waitFor();
    expect(readFileSync(path.join(dir, 'workspace', 'runs.log'), 'utf8')).toBe('run\n');

    await say('/approvals');
    await page.locator('.msg.bot', { hasText: 'No approvals are pending in this conversation.' }).waitFor();
  });
});
