// ask_user in the web chat in real Chromium: the question shows a button per option and a text
// field; the clicked option (or the typed answer) is the tool's result, read by the model's next
// request, and the buttons give way to the answer.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWarden } from '../../src/app/startup.js';
import { openWebChat, sayIn } from './web-chat-page.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';

const QUESTION = { id: 'deploy_target', header: 'Target', question: 'Where should it deploy?', options: [{ label: 'Staging (Recommended)' }, { label: 'Production' }] };

const messagesOf = (r: FakeRequest) => r.body.messages as Array<{ role: string; content: unknown }>;
const textOf = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content));

function respond(r: FakeRequest): FakeReply {
  const last = messagesOf(r).at(-1)!;
  const text = textOf(last.content);
  if (last.role === 'tool') {
    // The result comes wrapped as untrusted tool output: the JSON is between the markers.
    const answers = JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)) as { status: string; answers?: { answers: Record<string, string[]> } };
    return { kind: 'reply', text: `Tool said ${answers.status}: ${JSON.stringify(answers.answers?.answers ?? {})}` };
  }
  if (text.includes('deploy it')) return { kind: 'reply', toolCalls: [{ name: 'ask_user', args: { questions: [QUESTION] } }] };
  return { kind: 'reply', text: 'ok' };
}

let browser: Browser;
let warden: RunningWarden;
let model: FakeModelServer;
let page: Page;

beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-ask-web-'));
  ({ warden, browser, page } = await openWebChat({
    dir,
    modelUrl: model.url,
    config: {
      approvals: { waitSec: 30 },
      tools: { profile: 'messaging' },
    },
  }));
});

afterAll(async () => {
  await browser?.close();
  await warden?.stop();
  await model?.close();
});

const say = (text: string) => sayIn(page, text);

describe('web chat: ask_user', () => {
  it('a click on an option is the tool result; the buttons give way to the answer', async () => {
    await say('please deploy it');
    const form = page.locator('form.question-form').last();
    await form.waitFor();
    await expect.poll(() => form.locator('button.question-option').allTextContents()).toEqual(['Staging (Recommended)', 'Production']);
    await form.locator('button.question-option', { hasText: 'Production' }).click();
    await page.getByText('Tool said answered: {"deploy_target":["Production"]}').waitFor({ timeout: 20_000 });
    expect(textOf(messagesOf(model.requests.at(-1)!).filter((m) => m.role === 'tool').at(-1)?.content)).toContain('Production');
    await page.locator('p.question-answered', { hasText: 'Answered: Production' }).waitFor();
    expect(await page.locator('form.question-form').count()).toBe(0);
  });

  it('a typed answer is the tool result too', async () => {
    await say('please deploy it again');
    const form = page.locator('form.question-form').last();
    await form.waitFor();
    await form.locator('input[type="text"]').fill('the canary pool');
    await form.locator('button[type="submit"]').click();
    await page.getByText('Tool said answered: {"deploy_target":["the canary pool"]}').waitFor({ timeout: 20_000 });
  });
});
