// The secrets tool's view of the secret store and the private prompts: the agent's names (and
// this conversation's), a request through the conversation's adapter, a delete with its audit row.
import { AuditLog } from '../store/audit.js';
import type { Store } from '../store/store.js';
import type { SecretsToolDeps } from '../tools/core/secrets/secrets.js';
import type { SecretsRuntime } from './secret-grants.js';
import type { SecretPrompts } from './secret-prompts.js';

const NO_STORE = 'no secret store runs in this process (warden start opens one); ask the operator to run `warden secrets` on the host';

export function secretsToolDeps(secrets: SecretsRuntime | undefined, prompts: SecretPrompts | undefined, store: Store | undefined): SecretsToolDeps {
  const audit = store ? new AuditLog(store.db) : undefined;
  if (!secrets) {
    return {
      list: () => Promise.reject(new Error(NO_STORE)),
      request: async () => ({ ok: false, error: NO_STORE }),
      remove: () => Promise.reject(new Error(NO_STORE)),
    };
  }
  return {
    async list(agentId, sessionKey) {
      const rows = await secrets.store.list({ agentId });
      return rows.filter((r) => r.scope === '' || r.scope === sessionKey).map((r) => ({ name: r.name, scope: r.scope === '' ? ('agent' as const) : ('conversation' as const) }));
    },
    async request(input) {
      if (!prompts) return { ok: false, error: 'no chat platform runs here to ask a person privately; ask the operator to run `warden secrets set` on the host' };
      if (!input.channelId) return { ok: false, error: 'this turn has no conversation to ask in' };
      return prompts.ask({
        agentId: input.agentId,
        sessionKey: input.sessionKey,
        conversationOnly: input.conversationOnly,
        name: input.name,
        reason: input.reason,
        target: { provider: input.provider as 'discord' | 'slack' | 'web', channelId: input.channelId, threadId: input.threadId },
        guildId: input.guildId,
        requesterId: input.senderId,
      });
    },
    async remove(input) {
      const removed = await secrets.store.remove(input.agentId, input.name, input.conversationOnly ? input.sessionKey : '');
      if (removed) {
        await secrets.refresh();
        await audit?.recordOrLog({ type: 'secret.deleted', subject: input.name, actor: input.actor, sessionKey: input.sessionKey, data: { name: input.name, agentId: input.agentId, via: 'tool' } });
      }
      return removed;
    },
  };
}
