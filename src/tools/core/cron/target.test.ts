import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../../../test/store-engines.js';
import { SessionContextStore } from '../../../turn/session-contexts.js';
import { parseConfig } from '../../../config/index.js';
import type { TurnContext } from '../../../policy/context.js';
import { openWardenStore } from '../../../app/migrations.js';
import type { StoreEngine } from '../../../store/db.js';
import type { Store } from '../../../store/store.js';
import { channelMentionsIn, channelRefsIn, describeTarget, resolveCronTarget } from './target.js';

const config = (() => {
  const r = parseConfig({ owners: { discord: ['1'] } });
  if (!r.ok) throw r.error;
  return r.value.config;
})();

/** What the router recorded: conversations Warden was addressed in, in a new store on `engine`. */
async function known(engine: StoreEngine): Promise<{ opened: Store; store: SessionContextStore }> {
  const where = await freshStoreTarget(engine);
  const result = await openWardenStore({ dataDir: where.dataDir, url: where.url });
  if (!result.ok) throw new Error(result.error.message);
  const store = new SessionContextStore(result.store.db);
  const channel = (agentId: string, provider: string, guildId: string, guildName: string, id: string, name: string) =>
    store.record(`agent:${agentId}:${provider}:channel:${id.toLowerCase()}`, agentId, { provider, chat: 'channel', guildId, guildName, channelId: id, channelName: name }, '1');
  await channel('main', 'discord', 'G1', 'Team', '101', 'ops');
  await channel('main', 'discord', 'G1', 'Team', '102', 'general');
  await channel('main', 'discord', 'G2', 'Other', '201', 'ops');
  await channel('main', 'discord', 'G2', 'Other', '202', 'lab');
  await channel('other', 'discord', 'G1', 'Team', '103', 'secret');
  await channel('main', 'slack', 'T1', 'Acme', 'C1', 'ops');
  await store.record('agent:main:discord:channel:104:thread:t1', 'main', { provider: 'discord', chat: 'thread', guildId: 'G1', channelId: '104', channelName: 'threads-only', threadId: 't1' }, '1');
  return { opened: result.store, store };
}

const inG1: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', guildId: 'G1', guildName: 'Team', channelId: '102', channelName: 'general', senderId: '1', senderIsOwner: true, spawnDepth: 0 };
const inDm: TurnContext = { agentId: 'main', provider: 'discord', chat: 'dm', channelId: 'D1', senderId: '1', senderIsOwner: true, spawnDepth: 0 };
const HERE = 'agent:main:discord:channel:102';

describe.each(ENGINES)('resolveCronTarget on %s', (engine) => {
  let opened: Store;
  let store: SessionContextStore;
  beforeAll(async () => {
    ({ opened, store } = await known(engine));
  });
  afterAll(() => opened.close());

  it.each([
    ['nothing: this conversation', undefined, inG1, { sessionKey: HERE, channelId: '102', channelName: 'general' }],
    ['"here"', 'here', inG1, { sessionKey: HERE, channelId: '102' }],
    ['#ops in this guild', '#ops', inG1, { sessionKey: 'agent:main:discord:channel:101', chat: 'channel', guildId: 'G1', channelId: '101', channelName: 'ops' }],
    ['#OPS, any case', '#OPS', inG1, { channelId: '101' }],
    ['a Discord mention', '<#101>', inG1, { channelId: '101', channelName: 'ops', guildId: 'G1' }],
    ['a bare channel id', '101', inG1, { channelId: '101' }],
    ['an id in another guild the owner was addressed in', '<#202>', inG1, { channelId: '202', guildId: 'G2', channelName: 'lab' }],
    ['from a DM, a name unique across guilds', '#lab', inDm, { channelId: '202', guildId: 'G2' }],
    ['a Slack mention', '<#C1|ops>', { ...inG1, provider: 'slack', guildId: 'T1', channelId: 'C9' }, { channelId: 'C1', channelName: 'ops', provider: 'slack' }],
  ])('%s', async (_label, spec, turn, expected) => {
    const result = await resolveCronTarget(spec, turn, HERE, store, config);
    expect(result).toMatchObject({ ok: true, target: expected });
  });

  it.each([
    ['a channel Warden was never addressed in', '<#999>', inG1, /<#999> is not a discord channel Warden has been addressed in/],
    ['a name that only another guild has, from this guild', '#lab', inG1, /#lab is not a discord channel Warden has been addressed in/],
    ['a name two guilds have, from a DM', '#ops', inDm, /#ops names 2 channels/],
    ['a channel only another agent was addressed in', '<#103>', inG1, /is not a discord channel/],
    ['a channel known only as a thread’s parent', '<#104>', inG1, /is not a discord channel/],
    ['a channel of another provider', '<#C1>', inG1, /is not a discord channel/],
    ['a forged session key segment', '101:thread:t1', inG1, /is not a channel/],
    ['words', 'the ops room', inG1, /is not a channel/],
  ])('refuses %s', async (_label, spec, turn, error) => {
    const result = await resolveCronTarget(spec, turn, HERE, store, config);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(error);
  });

  it('refuses another channel to a non-owner turn unless tools.message.allowedTargets opens it', async () => {
    const guest = { ...inG1, senderId: '7', senderIsOwner: false };
    expect(await resolveCronTarget('#ops', guest, HERE, store, config)).toMatchObject({ ok: false, error: expect.stringContaining('tools.message.allowedTargets') });
    const open = parseConfig({ tools: { message: { allowedTargets: ['discord:101'] } } });
    if (!open.ok) throw open.error;
    expect((await resolveCronTarget('#ops', guest, HERE, store, open.value.config)).ok).toBe(true);
  });

  it('keeps the creating turn’s ceiling wherever the job posts', async () => {
    const inherited = { allow: ['read'], deny: [] };
    expect(await resolveCronTarget('#ops', { ...inG1, inherited }, HERE, store, config)).toMatchObject({ ok: true, target: { inherited } });
    expect(await resolveCronTarget(undefined, { ...inG1, inherited }, HERE, store, config)).toMatchObject({ ok: true, target: { inherited } });
  });

  it('without the records, only this conversation', async () => {
    expect((await resolveCronTarget('#ops', inG1, HERE, undefined, config)).ok).toBe(false);
    expect((await resolveCronTarget('here', inG1, HERE, undefined, config)).ok).toBe(true);
  });
});

describe('channelRefsIn', () => {
  it.each([
    ['post the open incidents in #ops', ['#ops']],
    ['nothing here', []],
    ['issue #12 and #ops', ['#12', '#ops']],
    ['&#39;quoted&#39; and a#b', []],
    ['<#101> then #ops', ['<#101>', '#ops']],
    ['<#C1|ops> and #ops', ['<#C1|ops>']],
  ])('%s', (text, labels) => {
    expect(channelRefsIn(text).map((r) => r.label)).toEqual(labels);
  });

  it.each([
    '<#101> and <#C1|ops> and <#C2|>',
    '<#> <#|x> <#a|b|c> <#a b>',
    '<#<#12>',
    '<#a|x <#b>',
    '<#a|never closed',
    '<#abc',
    '<#a|>>',
    '',
  ])('%j: the mentions the former pattern finds', (text) => {
    const former = [...text.matchAll(/<#([A-Za-z0-9]+)(?:\|([^>]*))?>/g)].map((m) => ({ index: m.index, text: m[0], id: m[1], ...(m[2] !== undefined ? { name: m[2] } : {}) }));
    expect(channelMentionsIn(text)).toEqual(former);
  });

  it('returns at once on 100,000 mentions that never close', () => {
    expect(channelRefsIn('<#a|'.repeat(100_000))).toEqual([]);
    expect(channelRefsIn(`${'<#a|'.repeat(100_000)}>`)).toHaveLength(1);
  });

  it('describes targets', () => {
    expect(describeTarget({ sessionKey: 'k', provider: 'discord', chat: 'channel', channelId: '1', channelName: 'ops' })).toBe('#ops');
    expect(describeTarget({ sessionKey: 'k', provider: 'discord', chat: 'dm' })).toBe('DM');
  });
});
