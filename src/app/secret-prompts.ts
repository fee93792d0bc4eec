// The secrets tool's requests waiting for a person: the private prompt is posted through the
// conversation's adapter (a button, then a modal), and the submission lands here — checked
// against the request (the one person asked, not expired), stored encrypted, registered as a
// known secret, audited by name. The conversation is then told the name is set, never the value.
// Like a deferred approval, the request does not hold the conversation: the tool answers at once.
import { randomUUID } from 'node:crypto';
import { log } from '../log/log.js';
import type { AuditLog } from '../store/audit.js';
import { SECRET_NAME } from '../store/secret-store.js';
import type { ChatAdapter, ReplyTarget } from '../gateway/types.js';
import type { SecretsRuntime } from './secret-grants.js';

/** How long a prompt can be answered (OpenClaw's default wait is 15 minutes too). */
export const SECRET_PROMPT_TTL_MS = 15 * 60_000;
const NOT_FOUND = 'This request is no longer open (answered, expired, or Warden restarted). Ask the assistant again if the secret is still needed.';
const NOT_YOURS = 'Only the person the assistant asked can enter this secret.';

interface Pending {
  id: string;
  agentId: string;
  /** '' for the agent, else the conversation's session key. */
  scope: string;
  sessionKey: string;
  name: string;
  reason: string;
  provider: string;
  requesterId: string;
  target: ReplyTarget;
  expiresAt: number;
}

export interface SecretAsk {
  agentId: string;
  sessionKey: string;
  conversationOnly: boolean;
  name: string;
  reason: string;
  target: ReplyTarget;
  requesterId: string | undefined;
}

export class SecretPrompts {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly deps: {
      secrets: SecretsRuntime;
      audit: AuditLog;
      adapter: (provider: string) => ChatAdapter | undefined;
      /** Posts to a conversation (the gateway's notify). */
      notify: (target: ReplyTarget, text: string) => Promise<void>;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /** Posts the private prompt; errors are values the tool hands the model. */
  async ask(input: SecretAsk): Promise<{ ok: true; id: string; expiresAt: number } | { ok: false; error: string }> {
    if (!SECRET_NAME.test(input.name)) return { ok: false, error: `name must be an environment variable name (A-Z, 0-9, _), got ${JSON.stringify(input.name)}` };
    if (!input.requesterId) return { ok: false, error: 'there is no person in this conversation to ask (a scheduled or system turn); ask the operator to run `warden secrets set`' };
    const adapter = this.deps.adapter(input.target.provider);
    if (!adapter?.askSecret) return { ok: false, error: `${input.target.provider} has no private prompt for secrets here; ask the operator to run \`warden secrets set ${input.name}\` on the host` };
    for (const [id, p] of this.pending) if (p.expiresAt <= this.now()) this.pending.delete(id);
    const id = randomUUID();
    const expiresAt = this.now() + SECRET_PROMPT_TTL_MS;
    const entry: Pending = {
      id,
      agentId: input.agentId,
      scope: input.conversationOnly ? input.sessionKey : '',
      sessionKey: input.sessionKey,
      name: input.name,
      reason: input.reason,
      provider: input.target.provider,
      requesterId: input.requesterId,
      target: input.target,
      expiresAt,
    };
    this.pending.set(id, entry);
    try {
      await adapter.askSecret(input.target, { id, name: input.name, reason: input.reason, requesterId: input.requesterId });
    } catch (err) {
      this.pending.delete(id);
      return { ok: false, error: `the private prompt could not be posted: ${(err as Error).message}` };
    }
    await this.deps.audit.recordOrLog({ type: 'secret.requested', subject: input.name, actor: `${entry.provider}:${entry.requesterId}`, sessionKey: input.sessionKey, data: { name: input.name, agentId: input.agentId, scope: entry.scope === '' ? 'agent' : 'conversation' } });
    return { ok: true, id, expiresAt };
  }

  private check(provider: string, id: string, userId: string): { ok: true; entry: Pending } | { ok: false; text: string } {
    const entry = this.pending.get(id);
    if (!entry || entry.provider !== provider || entry.expiresAt <= this.now()) return { ok: false, text: NOT_FOUND };
    if (entry.requesterId !== userId) return { ok: false, text: NOT_YOURS };
    return { ok: true, entry };
  }

  /** The adapter-facing handlers of one platform. */
  handlersFor(provider: string) {
    return {
      open: async ({ id, userId }: { id: string; userId: string }) => {
        const checked = this.check(provider, id, userId);
        return checked.ok ? { ok: true as const, name: checked.entry.name } : checked;
      },
      submit: async ({ id, userId, value }: { id: string; userId: string; value: string }) => {
        const checked = this.check(provider, id, userId);
        if (!checked.ok) return { ok: false, text: checked.text };
        if (value === '') return { ok: false, text: 'An empty value was not saved.' };
        const { entry } = checked;
        this.pending.delete(id);
        await this.deps.secrets.store.set({ agentId: entry.agentId, scope: entry.scope, name: entry.name, value, setBy: `${provider}:${userId}` });
        await this.deps.secrets.refresh();
        await this.deps.audit.recordOrLog({ type: 'secret.set', subject: entry.name, actor: `${provider}:${userId}`, sessionKey: entry.sessionKey, data: { name: entry.name, agentId: entry.agentId, scope: entry.scope === '' ? 'agent' : 'conversation', via: 'prompt' } });
        log.info({ name: entry.name, agentId: entry.agentId, provider }, 'secret set through the private prompt');
        await this.deps.notify(entry.target, `The secret ${entry.name} is set (the assistant cannot read it; commands granted it in secrets.grants receive it).`).catch((err: unknown) => log.warn({ err }, 'secret set; the conversation was not told'));
        return { ok: true, text: `${entry.name} saved. It is encrypted in Warden's secret store; the assistant never sees it.` };
      },
    };
  }
}
