import { describe, expect, it } from 'vitest';
import { config } from '../policy/testing.js';
import { parseConfig } from '../config/index.js';
import { buildTurnContext, contextForSessionMessage, contextForSubagent, intersectCeilings, refreshTurnContext, type ContextInput } from './turn-context.js';

const cfg = config({
  owners: { discord: ['900'], slack: ['UOWNER'] },
  models: { default: 'anthropic/claude-sonnet-4-5', providers: { local: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', supportsTools: false } } },
  agents: { list: [{ id: 'main', default: true }, { id: 'coder', model: 'openai/gpt-5' }] },
  tools: { exec: { host: 'gateway' } },
});
const dev = { provider: 'discord', chat: 'channel' as const, guildId: '111', channelId: '502', channelName: '#dev' };
const build = (over: Partial<ContextInput> = {}) => buildTurnContext(cfg, { agentId: 'main', conversation: dev, sender: { id: '700' }, ...over });

describe('buildTurnContext: what every path derives the same way', () => {
  it.each([
    ['a discord owner', { sender: { id: '900' } }, { senderIsOwner: true }],
    ['an id that is an owner elsewhere', { conversation: { ...dev, provider: 'slack' }, sender: { id: '900' } }, { senderIsOwner: false }],
    ['an owner in a turn that may not be one (cron, a child from the store)', { sender: { id: '900' }, mayBeOwner: false }, { senderIsOwner: false }],
    ['the web chat local user', { conversation: { provider: 'web', chat: 'dm' as const, channelId: 'web' }, sender: { id: 'local' } }, { senderIsOwner: true }],
    ['another web sender', { conversation: { provider: 'web', chat: 'dm' as const, channelId: 'web' }, sender: { id: 'guest' } }, { senderIsOwner: false }],
    ['no sender', { sender: {} }, { senderIsOwner: false }],
    ["the agent's model", { agentId: 'coder' }, { model: 'openai/gpt-5' }],
    ['a model that cannot call tools', { model: 'local/llama3' }, { model: 'local/llama3', modelSupportsTools: false }],
    ['the channel name without #', {}, { channelName: 'dev' }],
    ['a thread keeps its id; a channel drops a stray one', { conversation: { ...dev, threadId: 't1' } }, { threadId: undefined }],
    ['a DM has no guild', { conversation: { ...dev, chat: 'dm' as const } }, { guildId: undefined }],
  ])('%s', (_name, over, expected) => {
    expect(build(over)).toMatchObject(expected);
  });

  it('sandboxed follows tools.exec.host as the exec tool resolves it', () => {
    expect(build().sandboxed).toBe(false);
    expect(buildTurnContext(config({ tools: { exec: { host: 'sandbox' } } }), { agentId: 'main', conversation: dev, sender: {} }).sandboxed).toBe(true);
  });
});

describe('turns started by another turn', () => {
  const parent = build({ sender: { id: '900', name: 'olga' } });
  const ceiling = { allow: ['read', 'write', 'cron'], deny: ['exec'] };

  it('a subagent: one level deeper, under the ceiling, never more owner than its parent', () => {
    expect(contextForSubagent(cfg, parent, { agentId: 'main', inherited: ceiling })).toMatchObject({ spawnDepth: 1, senderId: '900', senderIsOwner: true, inherited: ceiling, model: parent.model });
    const child = contextForSubagent(cfg, { ...parent, senderIsOwner: false }, { agentId: 'coder', inherited: ceiling });
    expect(child).toMatchObject({ senderIsOwner: false, model: 'openai/gpt-5', agentId: 'coder' });
  });

  it("a sessions_send turn: the target's conversation, the sender's identity, the sender's ceiling", () => {
    const general = { provider: 'discord', chat: 'channel' as const, guildId: '111', channelId: '501', channelName: 'general' };
    const bob = build({ sender: { id: '555', name: 'bob' }, conversation: general });
    expect(contextForSessionMessage(cfg, { agentId: 'main', conversation: dev }, bob, ceiling)).toMatchObject({
      channelId: '502',
      channelName: 'dev',
      senderId: '555',
      senderIsOwner: false,
      spawnDepth: 0,
      inherited: ceiling,
    });
    // An owner's turn sending into a conversation of another platform is not an owner there.
    expect(contextForSessionMessage(cfg, { agentId: 'main', conversation: { ...dev, provider: 'slack' } }, parent, ceiling).senderIsOwner).toBe(false);
  });

  it.each([
    [undefined, { allow: ['a'], deny: [] }, { allow: ['a'], deny: [] }],
    [{ deny: ['x'] }, { allow: ['a', 'b'], deny: ['y'] }, { allow: ['a', 'b'], deny: ['x', 'y'] }],
    [{ allow: ['a', 'b'], deny: [] }, { allow: ['b', 'c'], deny: [] }, { allow: ['b'], deny: [] }],
    [{ allow: [], deny: [] }, { allow: ['a'], deny: [] }, { allow: [], deny: [] }],
  ])('intersectCeilings(%j, %j) = %j', (a, b, out) => {
    expect(intersectCeilings(a, b)).toEqual(out);
  });
});

describe('refreshTurnContext', () => {
  const cfg = (owners: string[], model = 'anthropic/claude-sonnet-4-5') => {
    const r = parseConfig({ owners: { discord: owners }, models: { default: model } });
    if (!r.ok) throw r.error;
    return r.value.config;
  };
  const ctx = (owners: string[], sender: string) => buildTurnContext(cfg(owners), { agentId: 'main', conversation: { provider: 'discord', chat: 'channel', guildId: 'g', channelId: 'c' }, sender: { id: sender } });

  it.each([
    ['an owner still listed stays one', ['1'], '1', ['1'], true],
    ['an owner removed from owners loses it', ['1'], '1', [], false],
    ['a non-owner added to owners meanwhile does not gain it mid-queue', [], '1', ['1'], false],
  ])('%s', (_what, before, sender, after, owner) => {
    expect(refreshTurnContext(cfg(after, 'openai/gpt-5'), ctx(before, sender))).toMatchObject({ senderIsOwner: owner, model: 'openai/gpt-5', guildId: 'g', channelId: 'c' });
  });
});
