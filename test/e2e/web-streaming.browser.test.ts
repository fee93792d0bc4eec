// The web chat streams a reply token by token, in real Chromium against a model fake that
// writes its answer over time: one bubble grows, the final text is the model's, and a reload
// shows the reply from the history (the stream itself is not kept).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWarden } from '../../src/app/startup.js';
import { openWebChat, sayIn } from './web-chat-page.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';

const ANSWER = 'Token by token: the web chat shows each piece as the model writes it, then the exact final text.';

let browser: Browser;
let warden: RunningWarden;
let model: FakeModelServer;
let page: Page;

beforeAll(async () => {
  model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: ANSWER, pieceDelayMs: 60 }) });
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-webstream-'));
  mkdirSync(path.join(dir, 'workspace'));
  ({ warden, browser, page } = await openWebChat({
    dir,
    modelUrl: model.url,
    config: {
      tools: { profile: 'minimal' },
    },
  }));
});

afterAll(async () => {
  await browser?.close();
  await warden?.stop();
  await model?.close();
});

describe('web chat streaming in Chromium', () => {
  it('one bot bubble grows with the text and ends exactly as the model wrote it', async () => {
    // Every text the bot bubbles show, with the time, as the page renders them.
    await page.evaluate(() => {
      const w = window as unknown as { seen: Array<{ at: number; texts: string[] }> };
      w.seen = [];
      new MutationObserver(() => {
        const texts = Array.from(document.querySelectorAll('.msg.bot'), (el) => el.textContent ?? '');
        w.seen.push({ at: Date.now(), texts });
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    const before = model.requests.length;
    await page.locator('#input').fill('stream please');
    await page.keyboard.press('Enter');
    await page.locator('.msg.bot:not(.streaming)', { hasText: ANSWER }).waitFor({ timeout: 15_000 });
    const seen = await page.evaluate(() => (window as unknown as { seen: Array<{ at: number; texts: string[] }> }).seen);
    const partials = [...new Set(seen.map((s) => s.texts.at(-1) ?? '').filter((t) => t !== '' && t !== ANSWER))];
    // Many intermediate states, each a prefix of the answer: token by token, never taken back.
    expect(partials.length).toBeGreaterThanOrEqual(5);
    for (const p of partials) expect(ANSWER.startsWith(p)).toBe(true);
    expect(seen.every((s) => s.texts.length <= 1)).toBe(true);
    expect(await page.locator('.msg.bot').allTextContents()).toEqual([ANSWER]);
    const firstText = model.requests[before]!.eventTimes![1]!;
    const firstVisible = seen.find((s) => (s.texts.at(-1) ?? '') !== '')!.at;
    process.stdout.write(`[bench] web: first visible ${firstVisible - firstText} ms after the model's first text; frames ${partials.length + 1}\n`);
    expect(firstVisible - firstText).toBeLessThanOrEqual(300);
  });

  it('a reload shows the reply once, from the history', async () => {
    await page.reload();
    await page.locator('#status[data-state="open"]').waitFor();
    await page.locator('.msg.bot', { hasText: ANSWER }).waitFor();
    expect(await page.locator('.msg.bot').allTextContents()).toEqual([ANSWER]);
  });
});
