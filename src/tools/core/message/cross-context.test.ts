import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../config/index.js';
import type { TurnContext } from '../../../policy/context.js';
import type { MessageTarget, MessagingService, ToolCallContext, ToolResult } from '../../types.js';
import { createMessageTool, type MessageArgs } from './message.js';

/** tools.message.crossContext: where the message tool may post beyond its conversation, and how it marks such posts. */
function setup(crossContext: unknown, allowedTargets: string[] = ['*']) {
  const r = parseConfig({ tools: { message: { allowedTargets, ...(crossContext === undefined ? {} : { crossContext }) } } });
  if (!r.ok) throw r.error;
  const sent: Array<{ target: MessageTarget; text: string }> = [];
  const messaging: MessagingService = {
    providers: () => ['discord', 'slack'],
    send: async (target, text) => (sent.push({ target, text }), { ok: true, channelId: target.channel ?? 'dm' }),
  };
  const tool = createMessageTool(r.value.config, messaging);
  const base: TurnContext = { agentId: 'main', provider: 'slack', chat: 'channel', channelId: 'C1', channelName: 'dev', senderId: 'U2', senderIsOwner: false, spawnDepth: 0 };
  const call = (args: MessageArgs, turn: Partial<TurnContext> = {}) => tool.execute(args, { turn: { ...base, ...turn } } as ToolCallContext) as Promise<ToolResult>;
  return { sent, call };
}
const textOf = (r: ToolResult) => (r.content[0] as { text: string }).text;

describe('tools.message.crossContext', () => {
  it.each<[string, unknown, MessageArgs, Partial<TurnContext>, string | null]>([
    ['within the provider, allowed by default', {}, { text: 'x', channel: 'C2' }, {}, null],
    ['within the provider, turned off', { allowWithinProvider: false }, { text: 'x', channel: 'C2' }, {}, 'posting outside this conversation on slack is turned off (tools.message.crossContext.allowWithinProvider: false)'],
    ['turned off holds for owners too', { allowWithinProvider: false }, { text: 'x', channel: 'C2' }, { senderIsOwner: true }, 'posting outside this conversation on slack is turned off (tools.message.crossContext.allowWithinProvider: false)'],
    ['across providers, turned off', { allowAcrossProviders: false }, { text: 'x', provider: 'discord', channel: '123' }, {}, 'posting from slack to discord is turned off (tools.message.crossContext.allowAcrossProviders: false)'],
    ['the own conversation is never cross-context', { allowWithinProvider: false, allowAcrossProviders: false }, { text: 'x' }, {}, null],
  ])('%s', async (_name, cross, args, turn, refusal) => {
    const { call, sent } = setup(cross);
    const result = await call(args, turn);
    if (refusal === null) expect(result.isError, textOf(result)).toBeFalsy();
    else {
      expect(textOf(result)).toBe(refusal);
      expect(sent).toHaveLength(0);
    }
  });

  it('marks posts elsewhere with their origin ([from {channel}] by default), never posts in place', async () => {
    const { call, sent } = setup({});
    await call({ text: 'deploy done', channel: 'C2' });
    await call({ text: 'here' });
    expect(sent.map((s) => s.text)).toEqual(['[from slack #dev] deploy done', 'here']);
  });

  it('takes a custom prefix and suffix, and can be turned off', async () => {
    const custom = setup({ marker: { prefix: '«{channel}» ', suffix: ' —bot' } });
    await custom.call({ text: 'x', provider: 'discord', channel: '9' });
    expect(custom.sent[0]!.text).toBe('«slack #dev» x —bot');
    const off = setup({ marker: { enabled: false } });
    await off.call({ text: 'x', channel: 'C2' });
    expect(off.sent[0]!.text).toBe('x');
  });

  it("without the block nothing changes: Warden's allowedTargets rule, no marker", async () => {
    const { call, sent } = setup(undefined, ['slack:C2']);
    await call({ text: 'x', channel: 'C2' });
    expect(sent[0]!.text).toBe('x');
    expect(textOf(await call({ text: 'x', channel: 'C3' }))).toMatch(/not allowed from here/);
  });
});
