// The secrets tool's requests waiting for a person: the private prompt is posted through the
// conversation's adapter (a button, then a modal), and the submission lands here — checked
// against the request (the one person asked, from where it was shown, still open, not expired), stored encrypted,
// registered as a known secret, audited by name. The conversation is then told the name is set,
// never the value. Like a deferred approval, the request does not hold the conversation: the
// tool answers at once.
//
// Requests live in the store (`secret_prompts`), so a submission that lands on another instance
// sharing the store, or after a restart, is checked and saved there — through the same
// encrypted secret store. The row holds the request's state only, never the value: the value
// goes from the submission straight to the secret store. A request is used once: one
// conditional write (`open` → `used`) takes it before the value is saved, so a replayed or
// concurrent second submission on any instance finds it no longer open.
import { randomUUID } from 'node:crypto';
import { originForAudit, sameConversation, type ClickOrigin } from '../approvals/click-origin.js';
import { log } from '../log/log.js';
import type { AuditLog } from '../store/audit.js';
import type { Db } from '../store/db.js';
import type { FeatureMigrations, Migration } from '../store/migrations.js';
import { SECRET_NAME } from '../store/secret-store.js';
import type { ChatAdapter, ReplyTarget } from '../gateway/types.js';
import type { SecretsRuntime } from './secret-grants.js';
import { storedTarget } from './user-questions-store.js';

/** How long a prompt can be answered (OpenClaw's default wait is 15 minutes too). */
export const SECRET_PROMPT_TTL_MS = 15 * 60_000;
const NOT_FOUND = 'This request is no longer open (answered, expired, or withdrawn). Ask the assistant again if the secret is still needed.';
const NOT_YOURS = 'Only the person the assistant asked can enter this secret.';
const ELSEWHERE = 'This secret can only be entered from the prompt where it was asked (that conversation, or your direct messages with the bot). Nothing was saved.';
/** Ended requests are kept this long, then forgotten (a late submission is refused either way). */
const KEEP_ENDED_MS = 24 * 3600_000;

export type SecretPromptState = 'open' | 'used';

/** A request as stored: who was asked for which name, where; never a value. */
export interface StoredSecretPrompt {
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
  /** The asking turn's Discord guild / Slack team (undefined: none, or a row older than the column). */
  guildId?: string | undefined;
  state: SecretPromptState;
  createdAt: number;
  expiresAt: number;
}

const columns = `
        id            TEXT PRIMARY KEY,
        agent_id      TEXT NOT NULL,
        scope         TEXT NOT NULL,   -- '' for the agent, else a conversation's session key
        session_key   TEXT NOT NULL,
        name          TEXT NOT NULL,
        reason        TEXT NOT NULL,
        provider      TEXT NOT NULL,
        requester_id  TEXT NOT NULL,
        target        TEXT NOT NULL,   -- JSON {provider, channelId, threadId?}: no credentials
        state         TEXT NOT NULL CHECK (state IN ('open', 'used')),
        used_by       TEXT,            -- provider:user who entered it`;

const sqlite001: Migration = {
  id: 'secret-prompts-001',
  async up(db) {
    await db.exec(`CREATE TABLE secret_prompts (${columns}
        created_at    INTEGER NOT NULL,
        expires_at    INTEGER NOT NULL,
        used_at       INTEGER
      );`);
  },
};

const postgres001: Migration = {
  id: 'secret-prompts-pg-001',
  async up(db) {
    await db.exec(`CREATE TABLE secret_prompts (${columns}
        created_at    BIGINT NOT NULL,
        expires_at    BIGINT NOT NULL,
        used_at       BIGINT
      );`);
  },
};

/** The asking turn's guild/team: a submission from the conversation must come from the same one. */
const guild002: Migration = {
  id: 'secret-prompts-002-guild',
  async up(db) {
    await db.exec('ALTER TABLE secret_prompts ADD COLUMN guild_id TEXT;');
  },
};

export const secretPromptsMigrations: FeatureMigrations = { feature: 'secret-prompts', sqlite: [sqlite001, guild002], postgres: [postgres001, guild002] };

interface Row {
  id: string;
  agent_id: string;
  scope: string;
  session_key: string;
  name: string;
  reason: string;
  provider: string;
  requester_id: string;
  target: string;
  guild_id?: string | null | undefined;
  state: SecretPromptState;
  created_at: number | string;
  expires_at: number | string;
}

const toPrompt = (r: Row): StoredSecretPrompt => ({
  id: r.id,
  agentId: r.agent_id,
  scope: r.scope,
  sessionKey: r.session_key,
  name: r.name,
  reason: r.reason,
  provider: r.provider,
  requesterId: r.requester_id,
  target: JSON.parse(r.target) as ReplyTarget,
  ...(r.guild_id !== null && r.guild_id !== undefined ? { guildId: r.guild_id } : {}),
  state: r.state,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
});

/** The `secret_prompts` table: the requests' state, taken by one conditional write. */
export class SecretPromptStore {
  constructor(private readonly db: Db) {}

  async insert(p: StoredSecretPrompt): Promise<void> {
    await this.db.run(
      `INSERT INTO secret_prompts (id, agent_id, scope, session_key, name, reason, provider, requester_id, target, guild_id, state, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?)`,
      [p.id, p.agentId, p.scope, p.sessionKey, p.name, p.reason, p.provider, p.requesterId, JSON.stringify(storedTarget(p.target)), p.guildId ?? null, p.createdAt, p.expiresAt],
    );
  }

  async get(id: string): Promise<StoredSecretPrompt | undefined> {
    const row = await this.db.get<Row>('SELECT * FROM secret_prompts WHERE id = ?', [id]);
    return row ? toPrompt(row) : undefined;
  }

  async remove(id: string): Promise<void> {
    await this.db.run("DELETE FROM secret_prompts WHERE id = ? AND state = 'open'", [id]);
  }

  /** Takes the request for one submission by the person asked; false when it was used, expired or is not theirs. */
  async use(id: string, provider: string, userId: string, now: number): Promise<boolean> {
    const info = await this.db.run(
      "UPDATE secret_prompts SET state = 'used', used_by = ?, used_at = ? WHERE id = ? AND state = 'open' AND provider = ? AND requester_id = ? AND expires_at > ?",
      [`${provider}:${userId}`, now, id, provider, userId, now],
    );
    return info.changes === 1;
  }

  /** Forgets requests that ended or expired before `before`. */
  async prune(before: number): Promise<void> {
    await this.db.run('DELETE FROM secret_prompts WHERE expires_at < ? OR (used_at IS NOT NULL AND used_at < ?)', [before, before]);
  }
}

export type SecretPromptRefusal = 'not-found' | 'not-yours' | 'elsewhere';

/**
 * Whether `userId`, on `provider`, clicking or submitting in the conversation `origin`, may
 * enter the secret request `p` asks for now: an unknown id, another platform's request, a used
 * or expired one → not found; anyone but the one person asked → not yours (approvers do not
 * enter others' secrets); from anywhere but where the prompt was shown — the conversation it
 * was asked in, or the person's own DM with the bot (Discord always posts it there; Slack
 * there when asked in a DM) → elsewhere.
 */
export function secretPromptRefusal(p: StoredSecretPrompt | undefined, click: { provider: string; userId: string; origin: ClickOrigin | undefined; now: number }): SecretPromptRefusal | undefined {
  if (!p || p.provider !== click.provider || p.state !== 'open' || p.expiresAt <= click.now) return 'not-found';
  if (p.requesterId !== click.userId) return 'not-yours';
  const origin = click.origin;
  if (!origin || origin.provider !== p.provider) return 'elsewhere';
  if (!origin.dm && !sameConversation({ ...p.target, guildId: p.guildId }, origin)) return 'elsewhere';
  return undefined;
}

export interface SecretAsk {
  agentId: string;
  sessionKey: string;
  conversationOnly: boolean;
  name: string;
  reason: string;
  target: ReplyTarget;
  /** The asking turn's Discord guild / Slack team; undefined in a DM or on the web chat. */
  guildId: string | undefined;
  requesterId: string | undefined;
}

export class SecretPrompts {
  readonly store: SecretPromptStore;

  constructor(
    private readonly deps: {
      db: Db;
      secrets: SecretsRuntime;
      audit: AuditLog;
      adapter: (provider: string) => ChatAdapter | undefined;
      /** Posts to a conversation (the gateway's notify). */
      notify: (target: ReplyTarget, text: string) => Promise<void>;
      now?: () => number;
    },
  ) {
    this.store = new SecretPromptStore(deps.db);
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /** Posts the private prompt; errors are values the tool hands the model. */
  async ask(input: SecretAsk): Promise<{ ok: true; id: string; expiresAt: number } | { ok: false; error: string }> {
    if (!SECRET_NAME.test(input.name)) return { ok: false, error: `name must be an environment variable name (A-Z, 0-9, _), got ${JSON.stringify(input.name)}` };
    if (!input.requesterId) return { ok: false, error: 'there is no person in this conversation to ask (a scheduled or system turn); ask the operator to run `warden secrets set`' };
    const adapter = this.deps.adapter(input.target.provider);
    if (!adapter?.askSecret) return { ok: false, error: `${input.target.provider} has no private prompt for secrets here; ask the operator to run \`warden secrets set ${input.name}\` on the host` };
    const now = this.now();
    await this.store.prune(now - KEEP_ENDED_MS);
    const id = randomUUID();
    const expiresAt = now + SECRET_PROMPT_TTL_MS;
    const entry: StoredSecretPrompt = {
      id,
      agentId: input.agentId,
      scope: input.conversationOnly ? input.sessionKey : '',
      sessionKey: input.sessionKey,
      name: input.name,
      reason: input.reason,
      provider: input.target.provider,
      requesterId: input.requesterId,
      target: input.target,
      ...(input.guildId !== undefined ? { guildId: input.guildId } : {}),
      state: 'open',
      createdAt: now,
      expiresAt,
    };
    await this.store.insert(entry);
    try {
      await adapter.askSecret(input.target, { id, name: input.name, reason: input.reason, requesterId: input.requesterId });
    } catch (err) {
      await this.store.remove(id).catch((e: unknown) => log.warn({ err: e, prompt: id }, 'secret prompt: an unposted request could not be removed'));
      return { ok: false, error: `the private prompt could not be posted: ${(err as Error).message}` };
    }
    await this.deps.audit.recordOrLog({ type: 'secret.requested', subject: input.name, actor: `${entry.provider}:${entry.requesterId}`, sessionKey: input.sessionKey, data: { name: input.name, agentId: input.agentId, scope: entry.scope === '' ? 'agent' : 'conversation' } });
    return { ok: true, id, expiresAt };
  }

  /** The one decision for every click and submission on a prompt (secretPromptRefusal); refusals logged, misplaced ones audited. */
  private async check(provider: string, id: string, userId: string, origin: ClickOrigin | undefined): Promise<{ ok: true; entry: StoredSecretPrompt } | { ok: false; text: string }> {
    const entry = await this.store.get(id);
    const refused = secretPromptRefusal(entry, { provider, userId, origin, now: this.now() });
    if (refused === 'not-yours') log.info({ provider, userId, prompt: id }, 'secret prompt refused: not the person asked');
    if (refused === 'elsewhere') {
      log.warn({ provider, userId, prompt: id, origin: originForAudit(origin) }, 'secret prompt refused: not from where it was shown');
      await this.deps.audit.recordOrLog({ type: 'secret.refused', subject: entry?.name ?? '', actor: `${provider}:${userId}`, sessionKey: entry?.sessionKey, data: { prompt: id, reason: 'not from the conversation the prompt was shown in', origin: originForAudit(origin) } });
    }
    if (refused) return { ok: false, text: refused === 'not-found' ? NOT_FOUND : refused === 'elsewhere' ? ELSEWHERE : NOT_YOURS };
    return { ok: true, entry: entry! };
  }

  /** The adapter-facing handlers of one platform. */
  handlersFor(provider: string) {
    return {
      open: async ({ id, userId, origin }: { id: string; userId: string; origin: ClickOrigin | undefined }) => {
        const checked = await this.check(provider, id, userId, origin);
        return checked.ok ? { ok: true as const, name: checked.entry.name } : checked;
      },
      submit: async ({ id, userId, value, origin }: { id: string; userId: string; value: string; origin: ClickOrigin | undefined }) => {
        const checked = await this.check(provider, id, userId, origin);
        if (!checked.ok) return { ok: false, text: checked.text };
        if (value === '') return { ok: false, text: 'An empty value was not saved.' };
        const { entry } = checked;
        // One submission per request, on whichever instance it lands: the write decides, then the value is saved.
        if (!(await this.store.use(id, provider, userId, this.now()))) return { ok: false, text: NOT_FOUND };
        try {
          await this.deps.secrets.store.set({ agentId: entry.agentId, scope: entry.scope, name: entry.name, value, setBy: `${provider}:${userId}` });
        } catch (err) {
          // The error names the store, never the value; the request is used, so the assistant asks again.
          log.error({ err: (err as Error).message, name: entry.name, agentId: entry.agentId }, 'secret prompt: the value could not be saved');
          return { ok: false, text: `${entry.name} was NOT saved (the secret store failed). Ask the assistant to request it again.` };
        }
        await this.deps.secrets.refresh();
        await this.deps.audit.recordOrLog({ type: 'secret.set', subject: entry.name, actor: `${provider}:${userId}`, sessionKey: entry.sessionKey, data: { name: entry.name, agentId: entry.agentId, scope: entry.scope === '' ? 'agent' : 'conversation', via: 'prompt' } });
        log.info({ name: entry.name, agentId: entry.agentId, provider }, 'secret set through the private prompt');
        await this.deps.notify(entry.target, `The secret ${entry.name} is set (the assistant cannot read it; commands granted it in secrets.grants receive it).`).catch((err: unknown) => log.warn({ err }, 'secret set; the conversation was not told'));
        return { ok: true, text: `${entry.name} saved. It is encrypted in Warden's secret store; the assistant never sees it.` };
      },
    };
  }
}
