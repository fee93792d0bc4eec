import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../config/index.js';
import type { TurnContext } from '../../../policy/context.js';
import type { MessageTarget, MessagingService, ToolCallContext, ToolResult } from '../../types.js';
import { createMessageTool, type MessageArgs } from './message.js';

const configOf = (raw: unknown) => {
  const r = parseConfig(raw);
  if (!r.ok) throw r.error;
  return r.value.config;
};

function setup(raw: unknown = {}) {
  const sent: Array<{ target: MessageTarget; text: string }> = [];
  const messaging: MessagingService = {
    providers: () => ['discord', 'slack'],
    send: async (target, text) => (sent.push({ target, text }), { ok: true, channelId: target.channel ?? `dm-${target.userId}` }),
  };
  const tool = createMessageTool(configOf(raw), messaging);
  const base: TurnContext = { agentId: 'main', provider: 'slack', chat: 'channel', channelId: 'C1', channelName: 'dev', senderId: 'U2', senderIsOwner: false, spawnDepth: 0 };
  const call = (args: MessageArgs, turn: Partial<TurnContext> = {}) => tool.execute(args, { turn: { ...base, ...turn } } as ToolCallContext) as Promise<ToolResult>;
  return { sent, call };
}
const textOf = (r: ToolResult) => (r.content[0] as { text: string }).text;

describe('the message tool', () => {
  it('posts in the current conversation by default, thread included', async () => {
    const { call, sent } = setup();
    expect(textOf(await call({ text: 'hi' }, { chat: 'thread', threadId: 'T9' }))).toBe('Posted to slack channel C1 (thread T9).');
    expect(sent[0]!.target).toEqual({ provider: 'slack', channel: 'C1', threadId: 'T9', userId: undefined });
  });

  it('answers a DM in the DM', async () => {
    const { call, sent } = setup();
    await call({ text: 'hi' }, { chat: 'dm', channelId: 'D1', senderId: 'U2' });
    expect(sent[0]!.target).toMatchObject({ provider: 'slack', userId: 'U2' });
  });

  it('refuses a non-owner posting elsewhere, and names the key that would allow it', async () => {
    const { call, sent } = setup();
    const result = await call({ text: 'everyone look', channel: '#announcements' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('posting to slack:#announcements is not allowed from here: only this conversation, or a target in tools.message.allowedTargets');
    expect((await call({ text: 'psst', userId: 'U3' })).isError).toBe(true);
    expect(sent).toEqual([]);
  });

  it('lets configured targets and owners post elsewhere', async () => {
    const { call, sent } = setup({ tools: { message: { allowedTargets: ['slack:#announcements'] } } });
    expect((await call({ text: 'release out', channel: '#announcements' })).isError).toBeFalsy();
    expect((await call({ text: 'x', provider: 'discord', channel: '42' }, { senderIsOwner: true })).isError).toBeFalsy();
    expect(sent.map((s) => s.target.channel)).toEqual(['#announcements', '42']);
  });

  it('says which adapters run when the target platform does not', async () => {
    const { call } = setup();
    expect(textOf(await call({ text: 'x', provider: 'web' }, { senderIsOwner: true }))).toBe('no web adapter is running; running: discord, slack');
  });

  it('rejects a malformed allowedTargets entry in the config', () => {
    const r = parseConfig({ tools: { message: { allowedTargets: ['#general'] } } });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.problems[0]!.path).toBe('tools.message.allowedTargets[0]');
  });

  it('works only where adapters run', async () => {
    const tool = createMessageTool(configOf({}), undefined);
    expect(textOf((await tool.execute({ text: 'x' }, { turn: {} } as ToolCallContext)) as ToolResult)).toContain('only inside `warden start`');
  });
});
