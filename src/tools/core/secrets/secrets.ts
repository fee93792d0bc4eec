import { jsonResult } from '../../result.js';
import type { ToolImplementation } from '../../types.js';
import { secretsParameters as parameters } from './secrets-schema.js';

/**
 * `secrets` (OpenClaw's tool of that name): the model asks a person for a credential it never
 * sees. `request` posts a private prompt to the person in this conversation (a button opening
 * a modal) and answers at once — the conversation is not held; `list` gives names only
 * (`{name, set: true}`); `delete` removes one. No action takes a value from the model: a value
 * arrives only through the prompt or `warden secrets set` on the host.
 */
export interface SecretsToolDeps {
  list(agentId: string, sessionKey: string): Promise<Array<{ name: string; scope: 'agent' | 'conversation' }>>;
  request(input: { agentId: string; sessionKey: string; conversationOnly: boolean; name: string; reason: string; provider: string; guildId: string | undefined; channelId: string | undefined; threadId: string | undefined; senderId: string | undefined }): Promise<{ ok: true; expiresAt: number } | { ok: false; error: string }>;
  remove(input: { agentId: string; sessionKey: string; conversationOnly: boolean; name: string; actor: string | undefined }): Promise<boolean>;
}

interface SecretsArgs {
  action: 'list' | 'request' | 'delete';
  name?: string;
  reason?: string;
  scope?: 'agent' | 'conversation';
}

export function createSecretsTool(deps: SecretsToolDeps): ToolImplementation<SecretsArgs> {
  return {
    id: 'secrets',
    parameters,
    async execute(args, ctx) {
      const { turn, sessionKey } = ctx;
      const conversationOnly = args.scope === 'conversation';
      if (args.action === 'list') {
        const names = await deps.list(turn.agentId, sessionKey);
        return jsonResult({ secrets: names.map((n) => ({ name: n.name, set: true, scope: n.scope })) });
      }
      if (!args.name) return jsonResult({ status: 'error', tool: 'secrets', error: `${args.action} needs name` }, true);
      // A stored value is what granted commands run with, for everyone in the agent (or the
      // conversation, which a channel's members share): only an owner may replace or remove one,
      // or a member could swap the token an owner's deploy uses.
      if (!turn.senderIsOwner) {
        return jsonResult({ status: 'error', tool: 'secrets', name: args.name, error: `only an owner can ${args.action === 'delete' ? 'remove' : 'store'} a secret; ask an owner to run this` }, true);
      }
      if (args.action === 'delete') {
        const removed = await deps.remove({ agentId: turn.agentId, sessionKey, conversationOnly, name: args.name, actor: turn.senderId === undefined ? undefined : `${turn.provider}:${turn.senderId}` });
        return jsonResult({ name: args.name, set: false, deleted: removed });
      }
      if (!args.reason) return jsonResult({ status: 'error', tool: 'secrets', error: 'request needs reason (shown to the person)' }, true);
      const asked = await deps.request({
        agentId: turn.agentId,
        sessionKey,
        conversationOnly,
        name: args.name,
        reason: args.reason,
        provider: turn.provider,
        guildId: turn.guildId,
        channelId: turn.channelId,
        threadId: turn.threadId,
        senderId: turn.senderId,
      });
      if (!asked.ok) return jsonResult({ status: 'error', tool: 'secrets', name: args.name, error: asked.error }, true);
      return jsonResult({
        name: args.name,
        set: false,
        status: 'requested',
        expiresAt: new Date(asked.expiresAt).toISOString(),
        note: 'The person was asked privately. Do not ask them to paste it into the chat, and do not wait or retry: the conversation is told when it is set. You will never see the value; commands granted it in secrets.grants receive it as an environment variable.',
      });
    },
  };
}
