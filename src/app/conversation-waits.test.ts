// conversations_turn's waits in the store, on both engines: a wait ends by one conditional write,
// so of two processes (or a reply and the deadline) exactly one ends it and queues the
// follow-up; a wait outlives the process that made it: after a restart the next admitted reply
// still answers it, and its deadline still gives the "no reply" follow-up.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { FollowUpTurn } from '../gateway/deferred-calls.js';
import type { InboundMessage } from '../policy/inbound.js';
import type { Store } from '../store/store.js';
import type { MessageTarget } from '../tools/types.js';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { until } from '../../test/until.js';
import { channelTurn } from './agent-testing.js';
import { ConversationWaits, ConversationWaitStore, type StoredWait } from './conversation-waits.js';
import { openWardenStore } from './migrations.js';

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
  const open: Store[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  /** One store target; each call opens another connection to it (another process, or the next start). */
  async function target() {
    const t = await freshStoreTarget(engine);
    return async () => {
      const opened = await openWardenStore({ dataDir: t.dataDir, url: t.url });
      if (!opened.ok) throw new Error(opened.error.message);
      open.push(opened.store);
      return opened.store;
    };
  }

  function proc(store: Store, name: string, now?: () => number) {
    const turns: FollowUpTurn[] = [];
    const waits = new ConversationWaits({ db: store.db, config: () => config, instance: name, sweepMs: 50, ...(now ? { now } : {}) });
    waits.bindFollowUp((t) => (turns.push(t), true));
    return { waits, turns };
  }

  it('finds only the open waits a message answers, and each ends by one write', async () => {
    const store = new ConversationWaitStore((await (await target())()).db);
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
    const connect = await target();
    const stores = [await connect(), await connect()].map((s) => new ConversationWaitStore(s.db));
    await stores[0]!.insert(stored({ id: 'w-race' }));
    const wins = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 3 === 2 ? stores[i % 2]!.expire('w-race', 61_000, `p${i}`) : stores[i % 2]!.answer('w-race', 2_000, `p${i}`))));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('a reply offered to two processes answers the wait once, whichever wins the write', async () => {
    const connect = await target();
    const a = proc(await connect(), 'a');
    const b = proc(await connect(), 'b');
    await a.waits.wait({ target: OPS, turn: OWNER_TURN, sessionKey: 'agent:main:discord:channel:dev', toolCallId: 'call1', timeoutMs: 60_000 });
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
    const before = proc(await connect(), 'first');
    const { id } = await before.waits.wait({ target: OPS, turn: OWNER_TURN, sessionKey: 'agent:main:discord:channel:dev', toolCallId: 'call7', timeoutMs: 60_000 });
    await before.waits.stop();
    await open.shift()!.close();

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
    const before = proc(await connect(), 'first');
    await before.waits.wait({ target: OPS, turn: OWNER_TURN, sessionKey: 'k', toolCallId: 'call8', timeoutMs: 300 });
    await before.waits.stop();
    await open.shift()!.close();

    const after = proc(await connect(), 'second');
    const other = proc(await connect(), 'third');
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
    stopping.waits.offer(msg({ text: 'first' }));
    await stopping.waits.idle();
    running.waits.offer(msg({ text: 'second' }));
    await running.waits.idle();
    expect(running.turns.map((t) => t.text)).toEqual([expect.stringContaining('second')]);
    await Promise.all([stopping.waits.stop(), running.waits.stop()]);
  });
});

describe('a follow-up is rebuilt under the config at delivery', () => {
  it('a caller no longer an owner is not one in the follow-up', async () => {
    const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-waits-')) });
    if (!opened.ok) throw new Error(opened.error.message);
    const demoted = parseConfig({ owners: { discord: ['7'] } });
    if (!demoted.ok) throw demoted.error;
    const waits = new ConversationWaits({ db: opened.store.db, config: () => demoted.value.config });
    const turns: FollowUpTurn[] = [];
    waits.bindFollowUp((t) => (turns.push(t), true));
    await waits.wait({ target: OPS, turn: OWNER_TURN, sessionKey: 'k', toolCallId: 'c', timeoutMs: 60_000 });
    waits.offer(msg());
    await waits.idle();
    expect(turns[0]!.context.senderIsOwner).toBe(false);
    await waits.stop();
    await opened.store.close();
  });
});
