// ask_user questions in the store, on both engines: a second UserQuestions on the same store —
// the next start, or another instance sharing it — takes the click and queues the follow-up;
// two clicks on two instances record one answer; the deadline ends a question once, including
// one that expired while no process ran; a turn still waiting inline on another live instance
// gets its answer inline, and one whose process died gets it in a follow-up.
import { afterEach, describe, expect, it } from 'vitest';
import type { FollowUpTurn } from '../gateway/deferred-calls.js';
import type { ChatAdapter, UserQuestionPrompt } from '../gateway/types.js';
import type { TurnContext } from '../policy/context.js';
import type { Store } from '../store/store.js';
import { ENGINES, useTestStores } from '../../test/store-engines.js';
import { UserQuestions } from './user-questions.js';
import { DbTranscriptStore } from '../agent/transcript.js';

/** Where the questions and prompts below were asked: the clicks come from there unless a case says otherwise. */
const HERE = { provider: 'discord', channelId: 'C1', dm: false };

const QUESTION = { id: 'deploy_target', header: 'Target', question: 'Where should it deploy?', options: [{ label: 'Staging' }, { label: 'Production' }] };
const spec = { questions: [QUESTION], timeoutSec: 60 };
const turn = { agentId: 'main', provider: 'discord', channelId: 'C1', chat: 'channel', senderId: 'U1' } as unknown as TurnContext;

describe.each(ENGINES)('ask_user questions across processes (%s)', (engine) => {
  // Registered first, so its closing runs after the processes below have stopped.
  const stores = useTestStores();
  const procs: UserQuestions[] = [];
  afterEach(() => {
    for (const p of procs.splice(0)) p.stop();
  });

  /** One store target; each call opens another connection to it (another process, or the next start). */
  async function target() {
    return (await stores.fresh(engine)).open;
  }

  /** A process: its own connection, its own instance id, a recording adapter and follow-up queue. */
  async function proc(connect: () => Promise<Store>, name: string, opts: { waitMs?: number; timeoutMs?: number; pollMs?: number; alive?: (instance: string) => boolean; now?: () => number } = {}) {
    const store = await connect();
    const transcripts = new DbTranscriptStore(store.db);
    const prompts: UserQuestionPrompt[] = [];
    const adapter = { provider: 'discord', askUser: async (_t: unknown, prompt: UserQuestionPrompt) => void prompts.push(prompt) } as unknown as ChatAdapter;
    const followUps: FollowUpTurn[] = [];
    const questions = new UserQuestions({
      db: store.db,
      instance: name,
      adapter: () => adapter,
      waitMs: () => opts.waitMs ?? 0,
      timeoutMs: () => opts.timeoutMs ?? 60_000,
      ...(opts.alive ? { ownerAlive: async (i: string) => opts.alive!(i) } : {}),
      transcripts,
      sweepMs: 40,
      pollMs: opts.pollMs ?? 20,
      ...(opts.now ? { now: opts.now } : {}),
    });
    questions.bindFollowUp((t) => (followUps.push(t), true));
    procs.push(questions);
    return { questions, prompts, followUps, transcripts, h: questions.handlersFor('discord') };
  }

  it('restart between ask and answer: the next process takes the click and the follow-up happens', async () => {
    const connect = await target();
    const a = await proc(connect, 'a');
    const pending = await a.questions.ask({ spec, turn, sessionKey: 's1', toolCallId: 'call-7' });
    expect(pending).toMatchObject({ status: 'pending' });
    a.questions.stop();
    const b = await proc(connect, 'b');
    await b.questions.start();
    expect(await b.h.choose({ id: a.prompts[0]!.id, question: 0, option: 1, userId: 'U1', origin: HERE })).toMatchObject({ ok: true, text: expect.stringContaining('passed on') });
    expect(b.followUps).toHaveLength(1);
    expect(b.followUps[0]).toMatchObject({ sessionKey: 's1', agentId: 'main', replyTo: { provider: 'discord', channelId: 'C1' } });
    expect(b.followUps[0]!.text).toContain('{"deploy_target":["Production"]}');
    expect(b.followUps[0]!.text).toContain('call call-7');
    // Answered once: the same click again, anywhere, finds it no longer open.
    expect(await b.h.choose({ id: a.prompts[0]!.id, question: 0, option: 0, userId: 'U1', origin: HERE })).toMatchObject({ ok: false, text: expect.stringMatching(/no longer open/) });
    expect(a.followUps).toHaveLength(0);
  });

  it('two instances, one click each at the same moment: one answer, one follow-up', async () => {
    const connect = await target();
    const a = await proc(connect, 'a');
    const b = await proc(connect, 'b');
    await a.questions.ask({ spec, turn, sessionKey: 's1', toolCallId: 'c' });
    const id = a.prompts[0]!.id;
    const [ra, rb] = await Promise.all([a.h.choose({ id, question: 0, option: 0, userId: 'U1', origin: HERE }), b.h.choose({ id, question: 0, option: 1, userId: 'U1', origin: HERE })]);
    expect([ra.ok, rb.ok].filter(Boolean)).toHaveLength(1);
    const loser = ra.ok ? rb : ra;
    expect(loser.text).toMatch(/no longer open|already answered/);
    expect(a.followUps.length + b.followUps.length).toBe(1);
    const winner = ra.ok ? 'Staging' : 'Production';
    expect([...a.followUps, ...b.followUps][0]!.text).toContain(`["${winner}"]`);
  });

  it('two questions answered on two instances at once: both answers kept, one follow-up with both', async () => {
    const connect = await target();
    const a = await proc(connect, 'a');
    const b = await proc(connect, 'b');
    const two = { questions: [QUESTION, { ...QUESTION, id: 'when', header: 'When', question: 'When?', options: [{ label: 'Now' }, { label: 'Tonight' }] }], timeoutSec: 60 };
    await a.questions.ask({ spec: two, turn, sessionKey: 's1', toolCallId: 'c' });
    const id = a.prompts[0]!.id;
    const [ra, rb] = await Promise.all([a.h.choose({ id, question: 0, option: 0, userId: 'U1', origin: HERE }), b.h.choose({ id, question: 1, option: 1, userId: 'U1', origin: HERE })]);
    expect(ra.ok && rb.ok).toBe(true);
    const all = [...a.followUps, ...b.followUps];
    expect(all).toHaveLength(1);
    expect(all[0]!.text).toContain('{"deploy_target":["Staging"],"when":["Tonight"]}');
  });

  it('an answer written on a stale read loses: each write is conditional on the version read', async () => {
    const connect = await target();
    const a = await proc(connect, 'a');
    const b = await proc(connect, 'b');
    const two = { questions: [QUESTION, { ...QUESTION, id: 'when' }], timeoutSec: 60 };
    await a.questions.ask({ spec: two, turn, sessionKey: 's1', toolCallId: 'c' });
    const id = a.prompts[0]!.id;
    // Both read version 1 (the ask's release made it 1); the first write wins, the second finds it changed.
    const read = (await b.questions.store.get(id))!;
    const now = Date.now();
    expect(await a.questions.store.answer(id, read.version, [['Staging'], null], false, now, 'a')).toBe(true);
    expect(await b.questions.store.answer(id, read.version, [null, ['Now']], false, now, 'b')).toBe(false);
    expect((await b.questions.store.get(id))!.answers).toEqual([['Staging'], null]);
    // The handler reads again and keeps both.
    expect(await b.h.choose({ id, question: 1, option: 0, userId: 'U1', origin: HERE })).toMatchObject({ ok: true });
    expect(b.followUps[0]!.text).toContain('{"deploy_target":["Staging"],"when":["Staging"]}');
  });

  it('the deadline ends a question once across two sweeping instances', async () => {
    const connect = await target();
    const a = await proc(connect, 'a', { timeoutMs: 150 });
    const b = await proc(connect, 'b');
    await a.questions.ask({ spec, turn, sessionKey: 's1', toolCallId: 'c' });
    await a.questions.start();
    await b.questions.start();
    await expect.poll(() => a.followUps.length + b.followUps.length, { timeout: 20_000 }).toBe(1);
    // Several sweeps later, still one.
    await new Promise((r) => setTimeout(r, 300));
    expect(a.followUps.length + b.followUps.length).toBe(1);
    expect([...a.followUps, ...b.followUps][0]!.text).toContain('"status":"no_answer"');
    expect(await b.h.choose({ id: a.prompts[0]!.id, question: 0, option: 0, userId: 'U1', origin: HERE })).toMatchObject({ ok: false, text: expect.stringMatching(/no longer open/) });
  });

  it('a question that expired while no process ran gets its no_answer at the next start, once', async () => {
    const connect = await target();
    // The deadline passes while no process runs, by the clock of the processes that start after:
    // with a deadline short enough to pass in real time, a loaded machine let it pass while `a`
    // still ran (its own timer ended the question, and `b` had nothing left to do).
    const a = await proc(connect, 'a');
    await a.questions.ask({ spec, turn, sessionKey: 's1', toolCallId: 'c' });
    a.questions.stop();
    expect(a.followUps).toHaveLength(0);
    const later = () => Date.now() + 120_000;
    const b = await proc(connect, 'b', { now: later });
    await b.questions.start();
    expect(b.followUps).toHaveLength(1);
    expect(b.followUps[0]!.text).toContain('"status":"no_answer"');
    const c = await proc(connect, 'c', { now: later });
    await c.questions.start();
    expect(c.followUps).toHaveLength(0);
  });

  it('a turn still waiting inline on a live instance gets the answer clicked on another, inline', async () => {
    const connect = await target();
    const alive = () => true;
    const a = await proc(connect, 'a', { waitMs: 10_000, alive });
    const b = await proc(connect, 'b', { alive });
    const outcome = a.questions.ask({ spec, turn, sessionKey: 's1', toolCallId: 'c' });
    await expect.poll(() => a.prompts.length).toBe(1);
    expect(await b.h.choose({ id: a.prompts[0]!.id, question: 0, option: 1, userId: 'U1', origin: HERE })).toMatchObject({ ok: true });
    expect(await outcome).toEqual({ status: 'answered', answers: { deploy_target: ['Production'] } });
    expect(a.followUps.length + b.followUps.length).toBe(0);
  });

  it('a turn whose process died while it waited inline: the answer comes in a follow-up, once', async () => {
    const connect = await target();
    // A dead process looks at nothing: its inline wait's look at the store never comes (were it
    // to come between b's answer and b's delivery, it would take the outcome as a live one does).
    const a = await proc(connect, 'a', { waitMs: 60_000, pollMs: 3_600_000 });
    const gone = new AbortController();
    const dead = a.questions.ask({ spec, turn, sessionKey: 's1', toolCallId: 'c', signal: gone.signal });
    await expect.poll(() => a.prompts.length).toBe(1);
    // Its turn died with it: the transcript ends on the unanswered ask_user call.
    await a.transcripts.append('s1', [{ kind: 'message', message: { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'ask_user', args: {} }] } } as never]);
    // Process a is gone (its instance's lease lapsed): b takes the click.
    const b = await proc(connect, 'b', { alive: (i) => i === 'b' });
    expect(await b.h.choose({ id: a.prompts[0]!.id, question: 0, option: 0, userId: 'U1', origin: HERE })).toMatchObject({ ok: true });
    expect(b.followUps).toHaveLength(1);
    expect(b.followUps[0]!.text).toContain('["Staging"]');
    // Before the follow-up runs, the open call gets the pending answer its turn would have had.
    await b.followUps[0]!.before?.();
    const last = (await b.transcripts.load('s1')).at(-1)!.message as { role: string; toolCallId: string; content: Array<{ text: string }> };
    expect(last).toMatchObject({ role: 'toolResult', toolCallId: 'c' });
    expect(JSON.parse(last.content[0]!.text)).toMatchObject({ status: 'pending', question: a.prompts[0]!.id });
    // Had its process lived on, its turn would not take the outcome a second time.
    gone.abort();
    expect(await dead).toMatchObject({ status: 'no_answer' });
    expect(a.followUps).toHaveLength(0);
  });

  it('a stopped turn ends its question on every instance, with no follow-up', async () => {
    const connect = await target();
    const a = await proc(connect, 'a', { waitMs: 60_000 });
    const b = await proc(connect, 'b');
    const controller = new AbortController();
    const outcome = a.questions.ask({ spec, turn, sessionKey: 's1', toolCallId: 'c', signal: controller.signal });
    await expect.poll(() => a.prompts.length).toBe(1);
    controller.abort();
    expect(await outcome).toMatchObject({ status: 'no_answer' });
    expect(await b.h.choose({ id: a.prompts[0]!.id, question: 0, option: 0, userId: 'U1', origin: HERE })).toMatchObject({ ok: false, text: expect.stringMatching(/no longer open/) });
    await b.questions.start();
    expect(a.followUps.length + b.followUps.length).toBe(0);
  });
});
