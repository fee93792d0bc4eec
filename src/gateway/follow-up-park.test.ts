// A follow-up claimed just before shutdown is not lost (both engines). An ask_user answer is
// claimed from the store (delivered once) and queued as a follow-up turn behind a busy
// conversation; the instance stops right then — its grace ends before the follow-up's turn
// begins. The follow-up is parked in the store, and the next instance to start (two start at
// once here) runs it exactly once. A follow-up offered while the gateway is already stopping is
// parked the same way, and one whose turn began is finished, not parked.
import { afterEach, describe, expect, it } from 'vitest';
import { DbTranscriptStore } from '../agent/transcript.js';
import { UserQuestions } from '../app/user-questions.js';
import { parseConfig } from '../config/index.js';
import type { TurnContext } from '../policy/context.js';
import type { Store } from '../store/store.js';
import { ENGINES, useTestStores } from '../../test/store-engines.js';
import { FollowUpStore } from './follow-up-store.js';
import { Gateway } from './gateway.js';
import { HeldAgent } from './held-agent-testing.js';
import type { ChatAdapter, InboundMessage, OutboundMessage, ReplyTarget, UserQuestionPrompt } from './types.js';

const SESSION = 'agent:main:web:direct:local';
const context = { agentId: 'main', provider: 'web', chat: 'dm', channelId: 'web', senderId: 'local', senderIsOwner: true, model: 'anthropic/claude-sonnet-4-5', spawnDepth: 0 } as unknown as TurnContext;
const QUESTION = { id: 'deploy_target', header: 'Target', question: 'Where should it deploy?', options: [{ label: 'Staging' }, { label: 'Production' }] };

class WebAdapter implements ChatAdapter {
  readonly provider = 'web' as const;
  readonly sent: Array<{ target: ReplyTarget; message: OutboundMessage }> = [];
  readonly prompts: UserQuestionPrompt[] = [];
  approvals = { provider: 'web', show: async () => {}, update: async () => {} };
  private onMessage: ((m: InboundMessage) => Promise<void>) | undefined;
  async start(onMessage: (m: InboundMessage) => Promise<void>) {
    this.onMessage = onMessage;
  }
  async send(target: ReplyTarget, message: OutboundMessage) {
    this.sent.push({ target, message });
  }
  typing() {
    return () => {};
  }
  async stop() {}
  async askUser(_t: ReplyTarget, prompt: UserQuestionPrompt) {
    this.prompts.push(prompt);
  }
  push(text: string) {
    return this.onMessage!({ provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'local', text, mentionsBot: false, messageId: String(Math.random()), receivedAt: Date.now() });
  }
}

const config = (() => {
  const parsed = parseConfig({ models: { default: 'anthropic/claude-sonnet-4-5' } });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
})();

function instance(store: Store, name: string) {
  const adapter = new WebAdapter();
  const agent = new HeldAgent();
  const gateway = new Gateway({
    config,
    adapters: [adapter],
    agent,
    tools: undefined,
    toolReport: () => ({ tools: [], removed: [], unavailable: [], warnings: [] }),
    approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
    shutdownGraceMs: 50,
    followUps: { store: new FollowUpStore(store.db), transcripts: new DbTranscriptStore(store.db), instance: name, sweepMs: 60_000 },
  });
  const questions = new UserQuestions({ db: store.db, instance: name, adapter: () => adapter, waitMs: () => 0 });
  questions.bindFollowUp((t) => gateway.followUp(t), () => gateway.accepting);
  const followUpsRun = () => agent.requests.filter((r) => r.input.text.startsWith('[Question ')).length;
  return { adapter, agent, gateway, questions, followUpsRun };
}

const until = async (cond: () => boolean | Promise<boolean>, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe.each(ENGINES)('a follow-up claimed just before shutdown (%s)', (engine) => {
  const stores = useTestStores();
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    while (cleanup.length) await cleanup.pop()!();
  });

  it('stopped right after the claim: parked, then run once by one of two instances starting', async () => {
    const [sa, sb, sc] = await stores.handles(engine, 3);
    const a = instance(sa, 'A');
    await a.gateway.start();
    // The conversation is busy: a turn that never ends by itself.
    await a.adapter.push('a long task');
    await until(() => a.agent.requests.length === 1);
    // ask_user, past its wait: pending; then the person answers — claimed and queued behind the turn.
    expect(await a.questions.ask({ spec: { questions: [QUESTION], timeoutSec: 60 }, turn: context, sessionKey: SESSION, toolCallId: 'call-1' })).toMatchObject({ status: 'pending' });
    const id = a.adapter.prompts[0]!.id;
    expect(await a.questions.handlersFor('web').choose({ id, question: 0, option: 1, userId: 'local', origin: { provider: 'web', channelId: 'web', dm: true } })).toMatchObject({ ok: true });
    expect(await a.questions.store.get(id)).toMatchObject({ state: 'answered', delivered: true });
    // Stop now: the grace ends with the follow-up still waiting behind the busy turn.
    a.questions.stop();
    await a.gateway.stop();
    expect(a.followUpsRun()).toBe(0);
    // Nobody typed it: nobody is told to send it again.
    expect(a.adapter.sent.some((s) => s.message.text.includes('send it again'))).toBe(false);
    const parked = await sa.db.all<{ state: string; text: string }>('SELECT state, text FROM follow_ups');
    expect(parked).toEqual([{ state: 'parked', text: expect.stringContaining(`[Question ${id}]`) }]);

    // Two instances start at once on the same store: the parked follow-up runs on exactly one.
    const b = instance(sb, 'B');
    const c = instance(sc, 'C');
    cleanup.push(
      async () => (b.agent.releaseAll(), await b.gateway.stop()),
      async () => (c.agent.releaseAll(), await c.gateway.stop()),
    );
    await Promise.all([b.gateway.start(), c.gateway.start()]);
    await until(() => b.followUpsRun() + c.followUpsRun() === 1);
    const ran = b.followUpsRun() === 1 ? b : c;
    expect(ran.agent.requests.find((r) => r.input.text.startsWith('[Question '))!.input.text).toContain('{"deploy_target":["Production"]}');
    // Its turn began: no longer parked; later sweeps on either instance find nothing.
    await until(async () => (await sa.db.all('SELECT id FROM follow_ups')).length === 0);
    expect(await b.gateway.resumeFollowUps()).toBe(0);
    expect(await c.gateway.resumeFollowUps()).toBe(0);
    expect(b.followUpsRun() + c.followUpsRun()).toBe(1);
  });

  it('its turn would begin while the gateway is stopping (the busy turn ends within the grace): parked, not begun, and the next start runs it once', async () => {
    const [sa, sb] = await stores.handles(engine, 2);
    const a = instance(sa, 'A');
    await a.gateway.start();
    await a.adapter.push('a long task');
    await until(() => a.agent.requests.length === 1);
    expect(a.gateway.followUp({ sessionKey: SESSION, agentId: 'main', context, replyTo: { provider: 'web', channelId: 'web' }, text: '[Question q-behind] queued behind' })).toBe(true);
    const stopping = a.gateway.stop();
    // The busy turn ends inside the grace: the follow-up is next in the queue while the stop runs.
    a.agent.releaseAll();
    await stopping;
    expect(a.followUpsRun()).toBe(0);
    expect(await sa.db.all<{ state: string; text: string }>('SELECT state, text FROM follow_ups')).toEqual([{ state: 'parked', text: '[Question q-behind] queued behind' }]);
    const b = instance(sb, 'B');
    cleanup.push(async () => (b.agent.releaseAll(), await b.gateway.stop()));
    await b.gateway.start();
    await until(() => b.followUpsRun() === 1);
    await until(async () => (await sa.db.all('SELECT id FROM follow_ups')).length === 0);
  });

  it('offered while the gateway is stopping: parked, and the next start runs it', async () => {
    const [sa, sb] = await stores.handles(engine, 2);
    const a = instance(sa, 'A');
    await a.gateway.start();
    await a.adapter.push('a long task');
    await until(() => a.agent.requests.length === 1);
    const stopping = a.gateway.stop();
    expect(a.gateway.accepting).toBe(false);
    // A producer that claimed just before the stop began hands its follow-up over now.
    expect(a.gateway.followUp({ sessionKey: SESSION, agentId: 'main', context, replyTo: { provider: 'web', channelId: 'web' }, text: '[Question q-late] answered late' })).toBe(true);
    await stopping;
    expect((await sa.db.all('SELECT id FROM follow_ups')).length).toBe(1);
    // Once stopped, nothing is taken in (the caller keeps its claim and logs it).
    expect(a.gateway.followUp({ sessionKey: SESSION, agentId: 'main', context, replyTo: { provider: 'web', channelId: 'web' }, text: 'after' })).toBe(false);

    const b = instance(sb, 'B');
    cleanup.push(async () => (b.agent.releaseAll(), await b.gateway.stop()));
    await b.gateway.start();
    await until(() => b.followUpsRun() === 1);
    expect(b.agent.requests.at(-1)!.input).toEqual({ text: '[Question q-late] answered late', origin: 'user' });
  });

  it('a parked follow-up taken by an instance that stops before running it is put back, then runs once', async () => {
    const [sa, sb] = await stores.handles(engine, 2);
    const parking = new FollowUpStore(sa.db);
    const parked = (text: string) => parking.park({ sessionKey: SESSION, agentId: 'main', context, replyTo: { provider: 'web', channelId: 'web' }, text });
    await parked('[Question q1] first');
    await parked('[Question q2] second');
    // B takes both: the first's turn begins (and holds), the second waits behind it; B stops.
    const b = instance(sb, 'B');
    await b.gateway.start();
    await until(() => b.followUpsRun() === 1);
    await b.gateway.stop();
    expect(b.agent.requests.map((r) => r.input.text)).toEqual(['[Question q1] first']);
    // The begun one is the transcript's (finished); the other is parked again for anyone.
    expect(await sa.db.all<{ text: string; state: string; taken_by: string | null }>('SELECT text, state, taken_by FROM follow_ups')).toEqual([{ text: '[Question q2] second', state: 'parked', taken_by: null }]);
    const a = instance(sa, 'A2');
    cleanup.push(async () => (a.agent.releaseAll(), await a.gateway.stop()));
    await a.gateway.start();
    await until(() => a.followUpsRun() === 1);
    expect(a.agent.requests.map((r) => r.input.text)).toEqual(['[Question q2] second']);
  });
  it('a parked follow-up is judged under the config of the instance that runs it: an owner when parked is not one when the config no longer says so', async () => {
    const [sa] = await stores.handles(engine, 1);
    const parking = new FollowUpStore(sa.db);
    // Parked as a Discord owner's follow-up; this config names no owner at all.
    const wasOwner = { ...context, provider: 'discord', chat: 'channel', channelId: 'c-1', guildId: 'g-1', senderId: 'u-1', senderIsOwner: true } as unknown as TurnContext;
    await parking.park({ sessionKey: SESSION, agentId: 'main', context: wasOwner, replyTo: { provider: 'discord', channelId: 'c-1' }, text: '[Question q9] stale' });
    const a = instance(sa, 'A');
    cleanup.push(async () => (a.agent.releaseAll(), await a.gateway.stop()));
    await a.gateway.start();
    await until(() => a.followUpsRun() === 1);
    expect(a.agent.requests[0]!.turn).toMatchObject({ senderId: 'u-1', senderIsOwner: false });
  });
  it('follow-ups parked in a burst (the same millisecond) are taken in the order they were parked', async () => {
    const [sa] = await stores.handles(engine, 1);
    const parking = new FollowUpStore(sa.db);
    const texts = Array.from({ length: 40 }, (_, i) => `[Question q${i}] burst`);
    for (const text of texts) await parking.park({ sessionKey: SESSION, agentId: 'main', context, replyTo: { provider: 'web', channelId: 'web' }, text });
    expect((await parking.take('B', async () => true)).map((f) => f.text)).toEqual(texts);
  });
  it('a parked follow-up taken by an instance that died (no longer live) is taken again and runs once; a live taker keeps it', async () => {
    const [sa, sb] = await stores.handles(engine, 2);
    const parking = new FollowUpStore(sa.db);
    await parking.park({ sessionKey: SESSION, agentId: 'main', context, replyTo: { provider: 'web', channelId: 'web' }, text: '[Question q3] orphaned' });
    expect(await parking.take('X', async () => false)).toHaveLength(1);
    // While X lives, nobody else takes it.
    expect(await new FollowUpStore(sb.db).take('B', async (i) => i === 'X')).toHaveLength(0);
    // X died without running it: B's start takes it.
    const b = instance(sb, 'B');
    cleanup.push(async () => (b.agent.releaseAll(), await b.gateway.stop()));
    await b.gateway.start();
    await until(() => b.followUpsRun() === 1);
    expect(b.agent.requests.at(-1)!.input.text).toBe('[Question q3] orphaned');
  });
});
