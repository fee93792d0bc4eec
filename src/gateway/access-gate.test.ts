import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openWardenStore } from '../app/migrations.js';
import { SharedDeliveries } from '../cluster/deliveries.js';
import { RateLimiter } from '../cluster/rate-limit.js';
import { parseConfig } from '../config/index.js';
import type { WardenConfig } from '../config/schema/index.js';
import type { Store } from '../store/store.js';
import { AccessGate, DEFAULT_DENIED_REPLY, type GateOutcome } from './access-gate.js';
import type { InboundMessage } from './types.js';

function config(raw: Record<string, unknown>): WardenConfig {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

const message = (extra: Partial<InboundMessage> = {}): InboundMessage => ({
  provider: 'discord',
  chatType: 'dm',
  channelId: 'D1',
  senderId: '7',
  text: 'hi',
  mentionsBot: false,
  messageId: 'm1',
  receivedAt: 0,
  ...extra,
});
const route = { agentId: 'main', sessionKey: 'agent:main:discord:dm:7' };

const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close().catch(() => undefined)));
});
async function store(): Promise<Store> {
  const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-gate-')) });
  if (!opened.ok) throw new Error(opened.error.message);
  stores.push(opened.store);
  return opened.store;
}

describe('AccessGate', () => {
  it('tells a refused sender once per 10 minutes; deniedReply sets the text or silence', async () => {
    let now = 0;
    const gate = new AccessGate({ now: () => now });
    const closed = config({ owners: { discord: ['1'] }, channels: { discord: { token: 't', dmPolicy: 'disabled' } } });
    expect(await gate.admit(closed, message(), route)).toEqual({ pass: false, reply: DEFAULT_DENIED_REPLY });
    expect(await gate.admit(closed, message(), route)).toEqual({ pass: false, reply: undefined });
    now += 10 * 60 * 1000;
    expect((await gate.admit(closed, message(), route)).pass).toBe(false);
    const custom = config({ channels: { discord: { token: 't', dmPolicy: 'disabled', deniedReply: 'No.' } } });
    expect(await new AccessGate({}).admit(custom, message(), route)).toEqual({ pass: false, reply: 'No.' });
    const silent = config({ channels: { discord: { token: 't', dmPolicy: 'disabled', deniedReply: false } } });
    expect(await new AccessGate({}).admit(silent, message(), route)).toEqual({ pass: false, reply: undefined });
    // An owner passes.
    expect((await gate.admit(closed, message({ senderId: '1' }), route)).pass).toBe(true);
  });

  it('one gate across reloads: each config decides for itself, per conversation, whatever the gate saw before', async () => {
    const gate = new AccessGate({});
    const open = config({ channels: { discord: { token: 't', guilds: { G1: { channels: { C1: {} } } } } } });
    const closed = config({ channels: { discord: { token: 't', dmPolicy: 'disabled', groupPolicy: 'disabled' } } });
    const inGuild = (channelId: string) => message({ chatType: 'channel', guildId: 'G1', channelId });
    // Each message asked twice: the second answer (kept settings) must equal the first.
    for (const [cfg, msg, pass] of [
      [open, message(), true],
      [closed, message(), false],
      [open, message(), true],
      [open, inGuild('C1'), true],
      [closed, inGuild('C1'), false],
      [open, message({ provider: 'slack' }), true],
    ] as const) {
      for (let i = 0; i < 2; i++) expect((await gate.admit(cfg, msg, route)).pass, `${msg.provider} ${msg.chatType} ${msg.channelId}`).toBe(pass);
    }
  });

  it('the loop breaker: max bot turns in the window, then the cooldown; a person resets the count', async () => {
    let now = 0;
    const gate = new AccessGate({ now: () => now });
    const cfg = config({ channels: { discord: { token: 't', allowBots: true, botLoopProtection: { maxEventsPerWindow: 2, windowSeconds: 60, cooldownSeconds: 30 } } } });
    const bot = message({ senderIsBot: true, senderId: '99' });
    const passes = async (m: InboundMessage) => (await gate.admit(cfg, m, route)).pass;
    expect([await passes(bot), await passes(bot), await passes(bot)]).toEqual([true, true, false]);
    now += 29_000;
    expect(await passes(bot)).toBe(false);
    now += 2_000;
    expect(await passes(bot)).toBe(true);
    expect(await passes(message())).toBe(true);
    expect([await passes(bot), await passes(bot), await passes(bot)]).toEqual([true, true, false]);
  });

  it('rate limits: told once with the wait, silent after; owners are not limited; reply: false says nothing', async () => {
    const s = await store();
    const gate = new AccessGate({ limiter: new RateLimiter(s.db) });
    const cfg = config({ owners: { discord: ['1'] }, rateLimit: { sender: { perMinute: 2, burst: 2 } } });
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await gate.admit(cfg, message(), route));
    expect(outcomes.map((o) => o.pass)).toEqual([true, true, false, false]);
    expect(outcomes[2]).toMatchObject({ pass: false, reply: expect.stringMatching(/try again in \d+ s\.$/) });
    expect(outcomes[3]).toEqual({ pass: false });
    for (let i = 0; i < 4; i++) expect((await gate.admit(cfg, message({ senderId: '1' }), route)).pass).toBe(true);
    const quiet = config({ rateLimit: { sender: { perMinute: 1 }, reply: false } });
    await gate.admit(quiet, message({ senderId: '8' }), route);
    expect(await gate.admit(quiet, message({ senderId: '8' }), route)).toEqual({ pass: false });
  });

  it('a store that cannot count refuses the message (fail closed)', async () => {
    const s = await store();
    const gate = new AccessGate({ limiter: new RateLimiter(s.db) });
    await s.close();
    expect(await gate.admit(config({ rateLimit: { sender: { perMinute: 10 } } }), message(), route)).toEqual({ pass: false });
  });
});

describe.each(ENGINES)('the refusal notice, kept in the store (%s)', (engine) => {
  const closed = config({ channels: { discord: { token: 't', dmPolicy: 'disabled' } } });
  async function openOn(target: { dataDir: string; url: string | undefined }): Promise<Store> {
    const opened = await openWardenStore(target);
    if (!opened.ok) throw new Error(opened.error.message);
    stores.push(opened.store);
    return opened.store;
  }
  /** Two instances on one store: on PostgreSQL two connections, on SQLite two gates on the file. */
  async function twoGates(ttlMs?: number) {
    const target = await freshStoreTarget(engine);
    const a = await openOn(target);
    const b = engine === 'postgres' ? await openOn(target) : a;
    const notices = (s: Store) => {
      const d = new SharedDeliveries(s.db);
      return ttlMs === undefined ? d : { firstTime: (keys: readonly string[]) => d.firstTime(keys, ttlMs) };
    };
    return { a: new AccessGate({ notices: notices(a) }), b: new AccessGate({ notices: notices(b) }), store: a };
  }
  const replyOf = (o: GateOutcome) => (o.pass ? undefined : o.reply);
  const replies = (outcomes: GateOutcome[]) => outcomes.filter((o) => replyOf(o) !== undefined).length;

  it.each<[string, Array<['a' | 'b', string]>, number]>([
    ['one sender, each instance in turn: told once', [['a', '7'], ['b', '7'], ['a', '7'], ['b', '7']], 1],
    ['two senders: each told once', [['a', '7'], ['b', '8'], ['b', '7'], ['a', '8']], 2],
    ['the same id on another platform is another sender', [['a', '7'], ['b', 'slack:7']], 2],
  ])('%s', async (_name, sequence, told) => {
    const { a, b } = await twoGates();
    const outcomes = [];
    for (const [gate, sender] of sequence) {
      const [provider, id] = sender.startsWith('slack:') ? (['slack', sender.slice(6)] as const) : (['discord', sender] as const);
      const cfg = provider === 'slack' ? config({ channels: { slack: { botToken: 'x', dmPolicy: 'disabled' } } }) : closed;
      outcomes.push(await (gate === 'a' ? a : b).admit(cfg, message({ provider, senderId: id }), route));
    }
    expect(outcomes.every((o) => !o.pass)).toBe(true);
    expect(replies(outcomes)).toBe(told);
  });

  it('twenty refusals racing on two instances: one reply', async () => {
    const { a, b } = await twoGates();
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).admit(closed, message({ messageId: `m${i}` }), route)));
    expect(replies(outcomes)).toBe(1);
  });

  it('after the window the sender is told again', async () => {
    const { a, b } = await twoGates(80);
    expect(replies([await a.admit(closed, message(), route), await b.admit(closed, message(), route)])).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(replies([await b.admit(closed, message(), route), await a.admit(closed, message(), route)])).toBe(1);
  });

  it('a store that cannot be reached: this process decides, once per window; the message is refused all the same', async () => {
    const { a, store } = await twoGates();
    await store.close();
    const outcomes = [await a.admit(closed, message(), route), await a.admit(closed, message(), route)];
    expect(outcomes.every((o) => !o.pass)).toBe(true);
    expect(outcomes.map(replyOf)).toEqual([DEFAULT_DENIED_REPLY, undefined]);
  });

  it('a notice given before the store went away is not repeated by this process', async () => {
    const { a, store } = await twoGates();
    expect(replyOf(await a.admit(closed, message(), route))).toBe(DEFAULT_DENIED_REPLY);
    await store.close();
    expect(replyOf(await a.admit(closed, message(), route))).toBeUndefined();
  });
});

