import { describe, expect, it } from 'vitest';
import { createSecretsTool, type SecretsToolDeps } from './secrets.js';

/** A recording store: what the tool asked of it. */
function recording() {
  const calls: string[] = [];
  const deps: SecretsToolDeps = {
    list: async () => (calls.push('list'), [{ name: 'DEPLOY_TOKEN', scope: 'agent' }]),
    request: async () => (calls.push('request'), { ok: true, expiresAt: Date.now() + 60_000 }),
    remove: async () => (calls.push('remove'), true),
  };
  return { calls, tool: createSecretsTool(deps) };
}

const turn = (senderIsOwner: boolean) => ({ agentId: 'main', provider: 'discord', chat: 'channel', channelId: 'C1', senderId: senderIsOwner ? 'owner' : 'member', senderIsOwner, spawnDepth: 0 });
const run = async (args: Record<string, unknown>, senderIsOwner: boolean) => {
  const { calls, tool } = recording();
  const result = await tool.execute(args as never, { turn: turn(senderIsOwner), sessionKey: 'agent:main:discord:channel:C1' } as never);
  return { calls, text: JSON.stringify(result) };
};

describe('secrets tool: a stored value is an owner’s to set or remove', () => {
  // A granted command runs with the stored value for everyone in the agent or the channel's
  // conversation: a member who could replace it could swap the token an owner's deploy uses.
  const cases: Array<[string, Record<string, unknown>, boolean, string | undefined]> = [
    ['a member asks for an agent-wide value', { action: 'request', name: 'DEPLOY_TOKEN', reason: 'deploy' }, false, undefined],
    ['a member asks for a conversation value', { action: 'request', name: 'DEPLOY_TOKEN', reason: 'deploy', scope: 'conversation' }, false, undefined],
    ['a member removes a value', { action: 'delete', name: 'DEPLOY_TOKEN' }, false, undefined],
    ['a member lists names', { action: 'list' }, false, 'list'],
    ['an owner asks for a value', { action: 'request', name: 'DEPLOY_TOKEN', reason: 'deploy' }, true, 'request'],
    ['an owner removes a value', { action: 'delete', name: 'DEPLOY_TOKEN' }, true, 'remove'],
  ];
  it.each(cases)('%s', async (_name, args, owner, reached) => {
    const { calls, text } = await run(args, owner);
    expect(calls).toEqual(reached ? [reached] : []);
    if (!reached) expect(text).toContain('only an owner can');
  });
});
