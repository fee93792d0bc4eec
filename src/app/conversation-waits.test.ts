// conversations_turn's waits in the store, on both engines: a wait ends by one conditional write,
// so of two processes (or a reply and the deadline) exactly one ends it and queues the
// follow-up; a wait outlives the process that made it: after a restart the next admitted reply
// still answers it, and its deadline still gives the "no reply" follow-up.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { FollowUpTurn } from '../gateway/deferred-calls.js';
import type { InboundMessage } from '../policy/inbound.js';
import type { Store } from '../store/store.js';
import type { MessageTarget } from '../tools/types.js';
import { ENGINES, useTestStores } from '../../test/store-engines.js';
import { until } from '../../test/until.js';
import { channelTurn } from './agent-testing.js';
import { ConversationWaits, ConversationWaitStore, firstReply, placedAfter, type StoredWait, type WaitReply } from './conversation-waits.js';

const parsed = parseConfig({ owners: { discord: ['42'] } });
if (!parsed.ok) throw parsed.error;
const config = parsed.value.config;

const OPS: MessageTarget = { provider: 'discord', channel: 'OPS' };
const OWNER_TURN = channelTurn({ senderId: '42', senderIsOwner: true, channelId: 'DEV', channelName: 'dev' });

const msg = (over: Partial<InboundMessage> = {}): InboundMessage => ({
  provider: 'discord',
  chatType: 'channel',
  channelId: 'OPS',
  senderId: 'u9',
  senderName: 'bob',
  text: 'yes, go',
  mentionsBot: false,
  messageId: 'm1',
  receivedAt: 0,
  ...over,
});

const stored = (over: Partial<StoredWait> = {}): StoredWait => ({
  id: `w-${Math.random().toString(36).slice(2)}`,
  agentId: 'main',
  sessionKey: 'agent:main:discord:channel:dev',
  toolCallId: 'call1',
  target: OPS,
  turn: OWNER_TURN,
  createdAt: 1_000,
  expiresAt: 61_000,
  ...over,
});

describe.each(ENGINES)('conversation waits in the store (%s)', (engine) => {
  const stores = useTestStores();
  /** One new store; each call of the opener returned opens another connection to it (another process, or the next start). */
  const target = async () => (await stores.fresh(engine)).open;

  function proc(store: Store, name: string, now?: () => number) {
    const turns: FollowUpTurn[] = [];
    const waits = new ConversationWaits({ db: store.db, config: () => config, instance: name, sweepMs: 50, ...(now ? { now } : {}) });
    waits.bindFollowUp((t) => (turns.push(t), true));
    return { waits, turns };
  }

  it('finds only the open waits a message answers, and each ends by one write', async () => {
    const [handle] = await stores.handles(engine, 1);
    const store = new ConversationWaitStore(handle.db);
    const channel = stored({ id: 'w-channel' });
    const thread = stored({ id: 'w-thread', target: { provider: 'discord', channel: 'OPS', threadId: 'T1' } });
    const dm = stored({ id: 'w-dm', target: { provider: 'discord', userId: 'u9' } });
    for (const w of [channel, thread, dm]) await store.insert(w);

    const ids = async (m: InboundMessage) => (await store.openFor(m)).map((w) => w.id);
    expect(await ids(msg())).toEqual(['w-channel']);
    expect(await ids(msg({ chatType: 'thread', threadId: 'T1' }))).toEqual(['w-thread']);
    expect(await ids(msg({ chatType: 'thread', threadId: 'T2' }))).toEqual([]);
    expect(await ids(msg({ chatType: 'dm', channelId: 'D1' }))).toEqual(['w-dm']);
    expect(await ids(msg({ chatType: 'dm', channelId: 'D1', senderId: 'u8' }))).toEqual([]);
    expect(await ids(msg({ provider: 'slack' }))).toEqual([]);
    expect(await ids(msg({ senderIsBot: true }))).toEqual([]);
    expect((await store.openFor(msg({ chatType: 'dm', channelId: 'D1' })))[0]!.target).toEqual({ provider: 'discord', userId: 'u9' });
    expect((await store.openFor(msg({ chatType: 'thread', threadId: 'T1' })))[0]!.turn).toEqual(OWNER_TURN);

    // Answered once: a second reply, another process, or the deadline finds it ended.
    expect(await store.answer('w-channel', 2_000, 'a')).toBe(true);
    expect(await store.answer('w-channel', 2_000, 'b')).toBe(false);
    expect(await store.expire('w-channel', 70_000, 'b')).toBe(false);
    expect(await store.state('w-channel')).toBe('answered');
    expect(await ids(msg())).toEqual([]);

    // The deadline: not before it; then a late reply no longer answers.
    expect(await store.expire('w-thread', 60_999, 'a')).toBe(false);
    expect(await store.answer('w-thread', 61_000, 'a')).toBe(false);
    expect((await store.overdue(61_000)).map((w) => w.id).sort()).toEqual(['w-dm', 'w-thread']);
    expect(await store.expire('w-thread', 61_000, 'a')).toBe(true);
    expect(await store.expire('w-thread', 61_000, 'b')).toBe(false);
    expect(await store.state('w-thread')).toBe('expired');
    expect((await store.open()).map((w) => w.id)).toEqual(['w-dm']);
  });

  it('many writers racing for one wait: exactly one wins', async () => {
    const waitStores = (await stores.handles(engine, 2)).map((s) => new ConversationWaitStore(s.db));
    await waitStores[0]!.insert(stored({ id: 'w-race' }));
    const wins = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 3 === 2 ? waitStores[i % 2]!.expire('w-race', 61_000, `p${i}`) : waitStores[i % 2]!.answer('w-race', 2_000, `p${i}`))));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('a reply offered to two processes answers the wait once, whichever wins the write', async () => {
    const connect = await target();
    const a = proc(await connect(), 'a');
    const b = proc(await connect(), 'b');
    await a.waits.wait({ target: OPS, turn: OWNER_TURN, sessionKey: 'agent:main:discord:channel:dev', toolCallId: 'call1', timeoutMs: 60_000 });
    // B learns the conversation has a wait from the store when it starts.
    await b.waits.start();
    // The same reply offered to both (a platform that delivered it twice), plus a later one.
    b.waits.offer(msg({ text: 'ship it' }));
    a.waits.offer(msg({ text: 'ship it' }));
    b.waits.offer(msg({ text: 'second reply' }));
    await Promise.all([a.waits.idle(), b.waits.idle()]);
    const all = [...a.turns, ...b.turns];
    expect(all).toHaveLength(1);
    expect(all[0]!.text).toContain('ship it');
    expect(all[0]!.sessionKey).toBe('agent:main:discord:channel:dev');
    expect(all[0]!.replyTo).toEqual({ provider: 'discord', channelId: 'DEV' });
    await Promise.all([a.waits.stop(), b.waits.stop()]);
  });

  it('after a restart the next admitted reply answers a wait made before it', async () => {
    const connect = await target();
    const first = await connect();
    const before = proc(first, 'first');
    const { id } = await before.waits.wait({ target: OPS, turn: OWNER_TURN, sessionKey: 'agent:main:discord:channel:dev', toolCallId: 'call7', timeoutMs: 60_000 });
    await before.waits.stop();
    await first.close();

    const after = proc(await connect(), 'second');
    await after.waits.start();
    after.waits.offer(msg({ text: 'from a refused sender', senderId: 'banned' }), async () => false);
    after.waits.offer(msg({ text: 'ok after the restart' }), async () => true);
    await after.waits.idle();
    expect(after.turns).toHaveLength(1);
    expect(after.turns[0]!.text).toContain(`[Reply ${id}]`);
    expect(after.turns[0]!.text).toContain('call call7');
    expect(after.turns[0]!.text).toContain('ok after the restart');
    expect(after.turns[0]!.text).not.toContain('refused sender');
    // The follow-up's context is rebuilt under the config now: the caller is still an owner (42 is).
    expect(after.turns[0]!.context.senderIsOwner).toBe(true);
    await after.waits.stop();
  });

  it('after a restart the deadline of a wait made before it still gives "no reply", once', async () => {
    const connect = await target();
    const first = await connect();
    const before = proc(first, 'first');
    // The deadline passes while no process runs, by the clock of the processes that start after:
    // one short enough to pass in real time could pass, on a loaded machine, while `first` still
    // ran, and be its own timer's to end.
    await before.waits.wait({ target: OPS, turn: OWNER_TURN, sessionKey: 'k', toolCallId: 'call8', timeoutMs: 60_000 });
    await before.waits.stop();
    await first.close();
    expect(before.turns).toHaveLength(0);

    const later = () => Date.now() + 120_000;
    const after = proc(await connect(), 'second', later);
    const other = proc(await connect(), 'third', later);
    await Promise.all([after.waits.start(), other.waits.start()]);
    await until(() => after.turns.length + other.turns.length > 0, 5_000, 'the no-reply follow-up');
    // Both schedule the deadline and sweep: a moment more, so a second follow-up would show.
    await new Promise((r) => setTimeout(r, 200));
    const all = [...after.turns, ...other.turns];
    expect(all.map((t) => t.text)).toEqual([expect.stringContaining('got no reply')]);
    expect(all[0]!.text).toContain('call call8');
    await Promise.all([after.waits.stop(), other.waits.stop()]);
  });

  it('a process that cannot queue the follow-up leaves the wait open for one that can', async () => {
    const connect = await target();
    const stopping = proc(await connect(), 'stopping');
    stopping.waits.bindFollowUp(() => true, () => false);
    const running = proc(await connect(), 'running');
    await stopping.waits.wait({ target: OPS, turn: OWNER_TURN, sessionKey: 'k', toolCallId: 'c', timeoutMs: 60_000 });
    await running.waits.start();
    stopping.waits.offer(msg({ text: 'first' }));
    await stopping.waits.idle();
    running.waits.offer(msg({ text: 'second' }));
    await running.waits.idle();
    expect(running.turns.map((t) => t.text)).toEqual([expect.stringContaining('second')]);
    await Promise.all([stopping.waits.stop(), running.waits.stop()]);
  });
});

/** The turn's waits: stored pending before the post, anchored at the posted message, settled by platform order. */
describe.each(ENGINES)('a wait stored before its post (%s)', (engine) => {
  const stores = useTestStores();
  const target = async () => (await stores.fresh(engine)).open;
  function proc(store: Store, name: string) {
    const turns: FollowUpTurn[] = [];
    const waits = new ConversationWaits({ db: store.db, config: () => config, instance: name, sweepMs: 60_000 });
    waits.bindFollowUp((t) => (turns.push(t), true));
    return { waits, turns, store };
  }
  const input = { target: OPS, turn: OWNER_TURN, sessionKey: 'agent:main:discord:channel:dev', toolCallId: 'call1', timeoutMs: 60_000 };
  // Discord snowflakes: the question is 1000…500, a message before it …499, after it …501.
  const QUESTION = '1000000000000000500';

  it('a reply the platform placed after the question, offered before the post was recorded, answers it', async () => {
    const { waits, turns } = proc((await stores.handles(engine, 1))[0], 'a');
    const { id } = await waits.begin(input);
    // The platform accepted the post and the reply came at once: the old code stored the wait only now.
    waits.offer(msg({ text: 'too quick for you', messageId: '1000000000000000501' }));
    await waits.idle();
    expect(turns).toHaveLength(0);
    expect(await waits.store.state(id)).toBe('pending');
    await waits.posted(id, QUESTION);
    expect(turns.map((t) => t.text)).toEqual([expect.stringContaining('too quick for you')]);
    expect(await waits.store.state(id)).toBe('answered');
    expect(await waits.store.replies(id)).toEqual([]);
    await waits.stop();
  });

  it('a message placed before the question is no answer, whenever it is offered; the next one after it is', async () => {
    const { waits, turns } = proc((await stores.handles(engine, 1))[0], 'a');
    const { id } = await waits.begin(input);
    waits.offer(msg({ text: 'typed before the question', messageId: '1000000000000000499' }));
    await waits.idle();
    await waits.posted(id, QUESTION);
    // Delivered late (a slow gateway), still placed before the question.
    waits.offer(msg({ text: 'also before, delivered late', messageId: '1000000000000000498' }));
    await waits.idle();
    expect(turns).toHaveLength(0);
    expect(await waits.store.state(id)).toBe('waiting');
    waits.offer(msg({ text: 'the real answer', messageId: '1000000000000000777' }));
    await waits.idle();
    expect(turns.map((t) => t.text)).toEqual([expect.stringContaining('the real answer')]);
    await waits.stop();
  });

  it('of replies kept while pending, the first in the platform’s order answers, not the first offered', async () => {
    const { waits, turns } = proc((await stores.handles(engine, 1))[0], 'a');
    const { id } = await waits.begin(input);
    waits.offer(msg({ text: 'second by the platform', messageId: '1000000000000000600' }));
    waits.offer(msg({ text: 'first by the platform', messageId: '1000000000000000550' }));
    await waits.idle();
    await waits.posted(id, QUESTION);
    expect(turns.map((t) => t.text)).toEqual([expect.stringContaining('first by the platform')]);
    await waits.stop();
  });

  it('a post that fails leaves no wait and nothing kept for it', async () => {
    const { waits, turns, store } = proc((await stores.handles(engine, 1))[0], 'a');
    const { id } = await waits.begin(input);
    waits.offer(msg({ text: 'kept while pending', messageId: '1000000000000000501' }));
    await waits.idle();
    await waits.cancel(id);
    expect(await waits.store.state(id)).toBeUndefined();
    expect(Number(await store.db.value('SELECT COUNT(*) FROM conversation_wait_replies'))).toBe(0);
    waits.offer(msg({ text: 'later', messageId: '1000000000000000900' }));
    await waits.idle();
    expect(turns).toHaveLength(0);
    await waits.stop();
  });

  it('a pending wait made at A, the reply reaching B before A recorded its post: A’s record answers it, once', async () => {
    const connect = await target();
    const a = proc(await connect(), 'a');
    const b = proc(await connect(), 'b');
    // On PostgreSQL B learns of the wait by notification; on SQLite (one process) from the store at its start.
    if (engine === 'postgres') await b.waits.start();
    const { id } = await a.waits.begin(input);
    if (engine === 'sqlite') await b.waits.start();
    await until(() => b.waits.watching('discord:ch:OPS'), 5_000, 'B learns of the wait');
    b.waits.offer(msg({ text: 'answered at B', messageId: '1000000000000000501' }));
    await b.waits.idle();
    expect(b.turns).toHaveLength(0);
    await a.waits.posted(id, QUESTION);
    // The same reply delivered at B again (a redelivery) answers nothing more.
    b.waits.offer(msg({ text: 'answered at B', messageId: '1000000000000000501' }));
    await b.waits.idle();
    expect([...a.turns, ...b.turns].map((t) => t.text)).toEqual([expect.stringContaining('answered at B')]);
    expect(a.turns).toHaveLength(1);
    await Promise.all([a.waits.stop(), b.waits.stop()]);
  });

  it('a message in a conversation with no open wait does no store work; one where a wait opened does', async () => {
    const connect = await target();
    const a = proc(await connect(), 'a');
    const b = proc(await connect(), 'b');
    await b.waits.start();
    b.waits.offer(msg({ channelId: 'LOBBY', messageId: '1000000000000000501' }));
    b.waits.offer(msg({ chatType: 'dm', channelId: 'D1', messageId: '1000000000000000502' }));
    await b.waits.idle();
    expect(b.waits.storeLooks).toBe(0);
    if (engine === 'postgres') {
      // A wait made at another instance is announced: B looks at #OPS from then on.
      const { id } = await a.waits.begin(input);
      await until(() => b.waits.watching('discord:ch:OPS'), 5_000, 'the notification');
      await a.waits.posted(id, QUESTION);
      b.waits.offer(msg({ text: 'from B', messageId: '1000000000000000900' }));
      await b.waits.idle();
      expect(b.turns.map((t) => t.text)).toEqual([expect.stringContaining('from B')]);
      // Answered: the next message there looks once, finds none, and stops looking.
      b.waits.offer(msg({ messageId: '1000000000000000901' }));
      b.waits.offer(msg({ messageId: '1000000000000000902' }));
      await b.waits.idle();
      expect(b.waits.watching('discord:ch:OPS')).toBe(false);
    }
    await Promise.all([a.waits.stop(), b.waits.stop()]);
  });
});

describe('the platform’s order of two messages, from their ids alone', () => {
  it.each([
    ['discord', '1000000000000000501', '1000000000000000500', true],
    ['discord', '1000000000000000500', '1000000000000000500', false],
    ['discord', '999999999999999999', '1000000000000000000', false], // fewer digits: smaller, not later
    ['discord', '18446744073709551615', '1', true],
    ['discord', '12a', '1', undefined],
    ['discord', '-5', '1', undefined],
    ['slack', '1700000001.000002', '1700000001.000001', true],
    ['slack', '1700000002.000001', '1700000001.999999', true],
    ['slack', '1700000001.000001', '1700000001.000001', false],
    ['slack', '1700000001.1', '1700000001.000002', true], // fractions compared as fractions, not as integers
    ['slack', '999999999.999999', '1700000000.000000', false],
    ['slack', '1700000001', '1700000000.000001', undefined],
    ['slack', '1700000001.000001 ', '1700000000.000001', undefined],
    ['web', '2', '1', undefined],
  ] as const)('%s: %s after %s → %s', (provider, id, anchor, after) => {
    expect(placedAfter(provider, id, anchor)).toBe(after);
  });

  const r = (messageId: string, afterPost: boolean, offeredAt: number): WaitReply => ({ messageId, provider: 'slack', senderId: 'U1', text: messageId, afterPost, offeredAt });
  it('the first reply: the earliest after the anchor; without one, the earliest offered once posted', () => {
    const replies = [r('1700000003.000000', true, 1), r('1700000002.000000', false, 2), r('1700000000.500000', false, 3), r('garbage', true, 0)];
    expect(firstReply('slack', '1700000001.000000', replies)?.messageId).toBe('1700000002.000000');
    expect(firstReply('slack', '1700000009.000000', replies)).toBeUndefined();
    expect(firstReply('slack', undefined, replies)?.messageId).toBe('garbage');
    expect(firstReply('slack', undefined, [r('1700000002.000000', false, 2)])).toBeUndefined();
  });
});

describe('a follow-up is rebuilt under the config at delivery', () => {
  const stores = useTestStores();
  it('a caller no longer an owner is not one in the follow-up', async () => {
    const [store] = await stores.handles('sqlite', 1);
    const demoted = parseConfig({ owners: { discord: ['7'] } });
    if (!demoted.ok) throw demoted.error;
    const waits = new ConversationWaits({ db: store.db, config: () => demoted.value.config });
    const turns: FollowUpTurn[] = [];
    waits.bindFollowUp((t) => (turns.push(t), true));
    await waits.wait({ target: OPS, turn: OWNER_TURN, sessionKey: 'k', toolCallId: 'c', timeoutMs: 60_000 });
    waits.offer(msg());
    await waits.idle();
    expect(turns[0]!.context.senderIsOwner).toBe(false);
    await waits.stop();
  });
});
