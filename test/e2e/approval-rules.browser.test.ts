// Approval rules in the web chat in real Chromium: a write under deploy/ asks under a rule, with
// its risk line; "Deny with reason" is a text field whose reason reaches the model; "Allow in this
// conversation" lets the same call through without a card afterwards.
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWarden } from '../../src/app/startup.js';
import { openWebChat, sayIn } from './web-chat-page.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';


const messagesOf = (r: FakeRequest) => r.body.messages as Array<{ role: string; content: unknown }>;
const textOf = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content));
const lastUserText = (r: FakeRequest) => textOf(messagesOf(r).filter((m) => m.role === 'user').at(-1)?.content);

function respond(r: FakeRequest): FakeReply {
  const last = messagesOf(r).at(-1)!;
  if (last.role === 'tool') {
    const t = textOf(last.content);
    if (t.includes('pending approval')) return { kind: 'reply', text: 'The deploy file waits for an approval.' };
    if (t.includes('Denied')) return { kind: 'reply', text: 'Not written.' };
    const call = JSON.stringify(messagesOf(r).filter((x) => x.role === 'assistant').at(-1));
    return { kind: 'reply', text: call.includes('session_status') ? 'Status shown right away.' : 'Written right away.' };
  }
  const text = lastUserText(r);
  if (text.includes('[Approval ')) {
    if (text.includes('session_status')) return { kind: 'reply', text: 'The status is shown.' };
    return { kind: 'reply', text: text.includes('has now been run') ? 'The deploy file is written.' : 'The deploy file was not written.' };
  }
  const m = /write deploy (\S+)/.exec(text);
  if (m) return { kind: 'reply', toolCalls: [{ name: 'write', args: { path: 'deploy/app.yaml', content: `version: ${m[1]}\n` } }] };
  if (text.includes('show status')) return { kind: 'reply', toolCalls: [{ name: 'session_status', args: {} }] };
  return { kind: 'reply', text: 'ok' };
}

let browser: Browser;
let warden: RunningWarden;
let model: FakeModelServer;
let page: Page;
let dir: string;

beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
  dir = mkdtempSync(path.join(tmpdir(), 'warden-rules-web-'));
  mkdirSync(path.join(dir, 'workspace'));
  ({ warden, browser, page } = await openWebChat({
    dir,
    modelUrl: model.url,
    config: {
      approvals: { waitSec: 0, rules: [{ tools: ['write', 'edit'], match: { path: 'deploy/*' }, risk: 'writes files under deploy/' }, { tool: 'session_status' }] },
      tools: { profile: 'coding' },
    },
  }));
});

afterAll(async () => {
  await browser?.close();
  await warden?.stop();
  await model?.close();
});

const say = (text: string) => sayIn(page, text);

const deployFile = () => path.join(dir, 'workspace', 'deploy', 'app.yaml');

describe('web chat: approval rules', () => {
  it('"Deny with reason": the typed reason is on the card and in the model’s next request; nothing is written', async () => {
    await say('write deploy 1');
    const card = page.locator('#messages section.card[data-status="pending"]').last();
    await card.waitFor();
    expect(await card.locator('dd').allTextContents()).toEqual(expect.arrayContaining(['writes files under deploy/', 'approvals.rules[0]']));
    await page.locator('.msg.bot', { hasText: 'waits for an approval' }).first().waitFor();
    await card.locator('input.reason-text').fill('deploys are frozen this week');
    await card.locator('button[data-decision="deny-with-reason"]').click();
    await page.locator('#messages section.card[data-status="deny"]', { hasText: 'deploys are frozen this week' }).waitFor();
    await page.locator('.msg.bot', { hasText: 'The deploy file was not written.' }).waitFor();
    expect(model.requests.some((r) => lastUserText(r).includes('deploys are frozen this week'))).toBe(true);
    expect(existsSync(deployFile())).toBe(false);
  });

  it('"Allow in this conversation": run after the click, and the same call again runs without a card (a call naming no file)', async () => {
    await say('show status');
    const card = page.locator('#messages section.card[data-status="pending"]').last();
    await card.waitFor();
    await card.locator('button[data-decision="allow-conversation"]').click();
    await page.locator('.msg.bot', { hasText: 'The status is shown.' }).waitFor();
    const cardsBefore = await page.locator('#messages section.card').count();
    await say('show status');
    await page.locator('.msg.bot', { hasText: 'Status shown right away.' }).waitFor();
    expect(await page.locator('#messages section.card').count()).toBe(cardsBefore);
  });

  it('a grant is bound to content: a write the grant covered asks again once its file changed', async () => {
    await say('write deploy 2');
    const card = page.locator('#messages section.card[data-status="pending"]').last();
    await card.waitFor();
    await card.locator('button[data-decision="allow-conversation"]').click();
    await page.locator('.msg.bot', { hasText: 'The deploy file is written.' }).waitFor();
    expect(readFileSync(deployFile(), 'utf8')).toBe('version: 2\n');
    const cardsBefore = await page.locator('#messages section.card').count();
    await say('write deploy 2');
    await page.locator('#messages section.card[data-status="pending"]').last().waitFor();
    expect(await page.locator('#messages section.card').count()).toBe(cardsBefore + 1);
  });
});
