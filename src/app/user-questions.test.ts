// The ask_user questions registry with the real web chat adapter (a WebSocket page) and the
// real tool: what the person clicks or types is the tool's result; refusals name why; past the
// inline wait the turn gets `pending` and the outcome goes to the follow-up queue.
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createWebAdapter, type ServerFrame, type WebAdapter } from '../../adapters/web/adapter.js';
import type { FollowUpTurn } from '../gateway/deferred-calls.js';
import type { ChatAdapter, UserQuestionPrompt } from '../gateway/types.js';
import type { TurnContext } from '../policy/context.js';
import { WEB_LOCAL_USER } from '../policy/owners.js';
import { createAskUserTool } from '../tools/core/ask-user/ask-user.js';
import { UserQuestions } from './user-questions.js';
import { approverRefusal } from '../approvals/index.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Store } from '../store/store.js';
import { openWardenStore } from './migrations.js';

/** Where the questions and prompts below were asked: the clicks come from there unless a case says otherwise. */
const HERE = { provider: 'discord', channelId: 'C1', dm: false };

const TOKEN = 'per-install-token-0123456789abcdef0123456789';
const QUESTION = { id: 'deploy_target', header: 'Target', question: 'Where should it deploy?', options: [{ label: 'Staging' }, { label: 'Production' }] };
const turnOf = (provider: string, senderId: string | undefined): TurnContext => ({ agentId: 'main', provider, channelId: provider === 'web' ? 'web' : 'C1', chat: 'channel', senderId }) as unknown as TurnContext;

const started: WebAdapter[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const a of started.splice(0)) await a.stop();
  for (const s of stores.splice(0)) await s.close();
});

/** A fresh SQLite store (questions live in the store). */
async function db() {
  const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-questions-')) });
  if (!opened.ok) throw opened.error;
  stores.push(opened.store);
  return opened.store.db;
}

async function page(url: string) {
  const frames: ServerFrame[] = [];
  const waiters: Array<() => void> = [];
  const ws = new WebSocket(`${url.replace('http', 'ws')}ws`, { headers: { cookie: `warden_token=${TOKEN}` } });
  ws.on('message', (raw) => {
    frames.push(JSON.parse(raw.toString()) as ServerFrame);
    for (const w of waiters.splice(0)) w();
  });
  await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
  const waitFor = async (pred: (f: ServerFrame) => boolean): Promise<ServerFrame> => {
    for (;;) {
      const hit = frames.find(pred);
      if (hit) return hit;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return { ws, frames, waitFor, send: (frame: object) => ws.send(JSON.stringify(frame)) };
}

async function webSetup(waitMs: number, timeoutMs = 60_000) {
  const followUps: FollowUpTurn[] = [];
  let adapter: WebAdapter | undefined;
  const questions = new UserQuestions({ db: await db(), adapter: (p) => (p === 'web' ? adapter : undefined), waitMs: () => waitMs, timeoutMs: () => timeoutMs });
  questions.bindFollowUp((t) => (followUps.push(t), true));
  adapter = createWebAdapter({ host: '127.0.0.1', port: 0, token: undefined }, { token: TOKEN, onApprovalClick: async () => ({ kind: 'not-found' }), userQuestions: questions.handlersFor('web') });
  await adapter.start(async () => {});
  started.push(adapter);
  const p = await page(adapter.url!);
  await p.waitFor((f) => f.type === 'history');
  const tool = createAskUserTool({ ask: (input) => questions.ask(input) });
  const call = (args: unknown, signal = new AbortController().signal) =>
    tool.execute(args as Record<string, unknown>, { toolCallId: 'call-1', signal, sessionKey: 'web:main', turn: turnOf('web', WEB_LOCAL_USER) } as never) as Promise<{ content: Array<{ text: string }>; isError?: boolean }>;
  return { questions, followUps, page: p, call };
}

describe('ask_user in the web chat', () => {
  it('shows buttons; the clicked option is the tool result, and the page shows the answer', async () => {
    const { page: p, call } = await webSetup(10_000);
    const result = call({ questions: [QUESTION] });
    const frame = (await p.waitFor((f) => f.type === 'question')) as Extract<ServerFrame, { type: 'question' }>;
    expect(frame.prompt.questions[0]!.options.map((o) => o.label)).toEqual(['Staging', 'Production']);
    p.send({ type: 'answer', id: frame.prompt.id, question: 0, option: 1 });
    const text = (await result).content[0]!.text;
    expect(JSON.parse(text)).toEqual({ status: 'answered', answers: { answers: { deploy_target: ['Production'] } } });
    const answered = await p.waitFor((f) => f.type === 'question-answered');
    expect(answered).toMatchObject({ id: frame.prompt.id, question: 0, summary: expect.stringContaining('Answered: Production') });
    // Answered once: a second click is refused on the page.
    p.send({ type: 'answer', id: frame.prompt.id, question: 0, option: 0 });
    await p.waitFor((f) => f.type === 'message' && f.message.text.includes('no longer open'));
    p.ws.close();
  });

  it('takes a typed answer; two questions come back together', async () => {
    const { page: p, call } = await webSetup(10_000);
    const result = call({ questions: [QUESTION, { ...QUESTION, id: 'when', header: 'When', question: 'When?', options: [{ label: 'Now' }, { label: 'Tonight' }] }] });
    const frame = (await p.waitFor((f) => f.type === 'question')) as Extract<ServerFrame, { type: 'question' }>;
    p.send({ type: 'answer', id: frame.prompt.id, question: 1, value: '  after the freeze  ' });
    await p.waitFor((f) => f.type === 'message' && f.message.text.includes('1 more question'));
    p.send({ type: 'answer', id: frame.prompt.id, question: 0, option: 0 });
    expect(JSON.parse((await result).content[0]!.text).answers.answers).toEqual({ deploy_target: ['Staging'], when: ['after the freeze'] });
    p.ws.close();
  });

  it('gives the model a schema error naming the key, and posts nothing', async () => {
    const { page: p, call } = await webSetup(10_000);
    const result = await call({ questions: [{ ...QUESTION, options: [{ label: 'Only one' }] }] });
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toContain('questions[0].options: 1 given; offer 2-5 options');
    expect(p.frames.some((f) => f.type === 'question')).toBe(false);
    p.ws.close();
  });

  it('past the wait: the turn gets pending at once; the timeout sends "no answer" to the follow-up queue', async () => {
    const { page: p, call, followUps } = await webSetup(0, 150);
    const t0 = Date.now();
    const result = JSON.parse((await call({ questions: [QUESTION] })).content[0]!.text);
    expect(result.status).toBe('pending');
    expect(Date.now() - t0).toBeLessThan(150);
    expect(followUps).toHaveLength(0);
    await expect.poll(() => followUps.length, { timeout: 2_000 }).toBe(1);
    expect(followUps[0]).toMatchObject({ sessionKey: 'web:main', agentId: 'main', replyTo: { provider: 'web', channelId: 'web' } });
    expect(followUps[0]!.text).toContain('"status":"no_answer"');
    expect(followUps[0]!.text).toContain('call call-1');
    p.ws.close();
  });

  it('past the wait: a late answer goes to the follow-up queue, once', async () => {
    const { page: p, call, followUps } = await webSetup(0);
    expect(JSON.parse((await call({ questions: [QUESTION] })).content[0]!.text).status).toBe('pending');
    const frame = (await p.waitFor((f) => f.type === 'question')) as Extract<ServerFrame, { type: 'question' }>;
    p.send({ type: 'answer', id: frame.prompt.id, question: 0, option: 0 });
    await expect.poll(() => followUps.length, { timeout: 2_000 }).toBe(1);
    expect(followUps[0]!.text).toContain('{"deploy_target":["Staging"]}');
    p.ws.close();
  });
});

describe('ask_user: who may answer', () => {
  async function recording() {
    const prompts: UserQuestionPrompt[] = [];
    const adapter = { provider: 'discord', askUser: async (_t: unknown, prompt: UserQuestionPrompt) => void prompts.push(prompt) } as unknown as ChatAdapter;
    // U9 approves on Discord; `role:R1` names a role, never a user id.
    const approvers = { discord: ['U9', 'role:R1'], slack: ['U2'] };
    const questions = new UserQuestions({
      db: await db(),
      adapter: (p) => (p === 'discord' ? adapter : undefined),
      waitMs: () => 10_000,
      alsoMayAnswer: (p, userId) => approverRefusal({ owners: {}, approvers: approvers }, p, userId) === undefined,
    });
    return { prompts, questions };
  }
  const spec = { questions: [QUESTION], timeoutSec: 60 };

  const refusals: Array<[string, string, string, number, number, RegExp]> = [
    ['someone other than the requester', 'discord', 'U2', 0, 0, /Only the person the assistant asked/],
    ['an approver of another platform', 'discord', 'U2', 0, 0, /Only the person the assistant asked/],
    ['a user id equal to a role entry', 'discord', 'role:R1', 0, 0, /Only the person the assistant asked/],
    ['the requester through another platform', 'slack', 'U1', 0, 0, /no longer open/],
    ['a question index the prompt does not have', 'discord', 'U1', 3, 0, /no longer open/],
    ['an option index the question does not have', 'discord', 'U1', 0, 4, /no longer open/],
  ];
  it.each(refusals)('refuses %s, and the question stays open', async (_name, provider, userId, question, option, text) => {
    const { prompts, questions } = await recording();
    const controller = new AbortController();
    const outcome = questions.ask({ spec, turn: turnOf('discord', 'U1'), sessionKey: 's', toolCallId: 'c', signal: controller.signal });
    await expect.poll(() => prompts.length).toBe(1);
    const refused = await questions.handlersFor(provider).choose({ id: prompts[0]!.id, question, option, userId, origin: HERE });
    expect(refused).toMatchObject({ ok: false, text: expect.stringMatching(text) });
    // The free-text form is refused alike (it has no option to check).
    if (option === 0) expect(await questions.handlersFor(provider).open({ id: prompts[0]!.id, question, userId, origin: HERE })).toMatchObject({ ok: false });
    // The requester still can.
    expect(await questions.handlersFor('discord').choose({ id: prompts[0]!.id, question: 0, option: 1, userId: 'U1', origin: HERE })).toMatchObject({ ok: true });
    expect(await outcome).toEqual({ status: 'answered', answers: { deploy_target: ['Production'] } });
  });

  it('an approver of the platform may answer for the requester', async () => {
    const { prompts, questions } = await recording();
    const outcome = questions.ask({ spec, turn: turnOf('discord', 'U1'), sessionKey: 's', toolCallId: 'c' });
    await expect.poll(() => prompts.length).toBe(1);
    expect(await questions.handlersFor('discord').choose({ id: prompts[0]!.id, question: 0, option: 0, userId: 'U9', origin: HERE })).toMatchObject({ ok: true });
    expect(await outcome).toEqual({ status: 'answered', answers: { deploy_target: ['Staging'] } });
  });

  it('refuses an empty or over-long typed answer (a forged form), and keeps the question open', async () => {
    const { prompts, questions } = await recording();
    const outcome = questions.ask({ spec, turn: turnOf('discord', 'U1'), sessionKey: 's', toolCallId: 'c' });
    await expect.poll(() => prompts.length).toBe(1);
    const h = questions.handlersFor('discord');
    expect(await h.submit({ id: prompts[0]!.id, question: 0, userId: 'U1', value: '   ', origin: HERE })).toMatchObject({ ok: false, text: expect.stringContaining('empty') });
    expect(await h.submit({ id: prompts[0]!.id, question: 0, userId: 'U1', value: 'x'.repeat(1001), origin: HERE })).toMatchObject({ ok: false, text: expect.stringContaining('at most 1000') });
    expect(await h.submit({ id: prompts[0]!.id, question: 0, userId: 'U1', value: 'x'.repeat(1000), origin: HERE })).toMatchObject({ ok: true });
    expect(await outcome).toMatchObject({ status: 'answered' });
  });

  it('a turn without a person (scheduled) cannot ask', async () => {
    const { questions } = await recording();
    expect(await questions.ask({ spec, turn: turnOf('discord', undefined), sessionKey: 's', toolCallId: 'c' })).toMatchObject({ status: 'error', error: expect.stringContaining('no person') });
  });

  it('a stopped turn takes its question with it', async () => {
    const { prompts, questions } = await recording();
    const controller = new AbortController();
    const outcome = questions.ask({ spec, turn: turnOf('discord', 'U1'), sessionKey: 's', toolCallId: 'c', signal: controller.signal });
    await expect.poll(() => prompts.length).toBe(1);
    controller.abort();
    expect(await outcome).toMatchObject({ status: 'no_answer' });
    expect(await questions.handlersFor('discord').choose({ id: prompts[0]!.id, question: 0, option: 0, userId: 'U1', origin: HERE })).toMatchObject({ ok: false, text: expect.stringMatching(/no longer open/) });
  });
});
