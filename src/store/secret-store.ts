import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Db } from './db.js';
import type { FeatureMigrations, Migration } from './migrations.js';

/**
 * The secret store: values people gave through a private prompt (or `warden secrets set`),
 * encrypted with AES-256-GCM under a key that never sits in the database — `WARDEN_SECRETS_KEY`
 * (32 bytes, base64 or hex) or a key file generated in the data dir with mode 600. Each value
 * is bound to its row (agent, scope, name) as additional authenticated data: a ciphertext
 * copied to another row does not decrypt. Scoped to an agent, and optionally a conversation
 * (its session key); `''` is the agent-wide scope.
 */

const secretsSqlite001: Migration = {
  id: 'secrets-001-secret-values',
  async up(db) {
    await db.exec(`
      CREATE TABLE secret_values (
        agent_id    TEXT NOT NULL,
        scope       TEXT NOT NULL,   -- '' for the agent, else a conversation's session key
        name        TEXT NOT NULL,
        iv          TEXT NOT NULL,   -- base64, 12 bytes
        tag         TEXT NOT NULL,   -- base64, 16 bytes
        ciphertext  TEXT NOT NULL,   -- base64
        set_by      TEXT,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        PRIMARY KEY (agent_id, scope, name)
      );
    `);
  },
};

const secretsPg001: Migration = {
  id: 'secrets-pg-001-secret-values',
  async up(db) {
    await db.exec(`
      CREATE TABLE secret_values (
        agent_id    TEXT NOT NULL,
        scope       TEXT NOT NULL,
        name        TEXT NOT NULL,
        iv          TEXT NOT NULL,
        tag         TEXT NOT NULL,
        ciphertext  TEXT NOT NULL,
        set_by      TEXT,
        created_at  BIGINT NOT NULL,
        updated_at  BIGINT NOT NULL,
        PRIMARY KEY (agent_id, scope, name)
      );
    `);
  },
};

export const secretsMigrations: FeatureMigrations = { feature: 'secrets', sqlite: [secretsSqlite001], postgres: [secretsPg001] };

export const SECRETS_KEY_FILE = 'secrets.key';
/** A secret's name: an environment variable's (it is handed to commands as one). */
export const SECRET_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;

export type SecretKeyResult = { ok: true; key: Buffer; source: 'env' | 'file'; file?: string; created?: boolean } | { ok: false; error: string };

/**
 * The store's key: `WARDEN_SECRETS_KEY` when set (32 bytes as base64 or 64 hex digits), else
 * `<dataDir>/secrets.key`, created (mode 600) when missing. A key file others can read is
 * refused: the key is the secrets.
 */
export function secretsKey(dataDir: string, env: Readonly<Record<string, string | undefined>>): SecretKeyResult {
  const fromEnv = env.WARDEN_SECRETS_KEY?.trim();
  if (fromEnv) {
    const key = /^[0-9a-fA-F]{64}$/.test(fromEnv) ? Buffer.from(fromEnv, 'hex') : Buffer.from(fromEnv, 'base64');
    if (key.length !== 32) return { ok: false, error: 'WARDEN_SECRETS_KEY must be 32 bytes, as base64 (44 characters) or hex (64 digits)' };
    return { ok: true, key, source: 'env' };
  }
  const file = path.join(dataDir, SECRETS_KEY_FILE);
  if (existsSync(file)) {
    const mode = statSync(file).mode & 0o777;
    if ((mode & 0o077) !== 0) return { ok: false, error: `${file} is readable by others (mode ${mode.toString(8)}): chmod 600 it` };
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) return { ok: false, error: `${file} does not hold a 32-byte base64 key` };
    return { ok: true, key, source: 'file', file, created: false };
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { ok: true, key, source: 'file', file, created: true };
}

export interface SecretEntry {
  agentId: string;
  scope: string;
  name: string;
  setBy?: string | undefined;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  agent_id: string;
  scope: string;
  name: string;
  iv: string;
  tag: string;
  ciphertext: string;
  set_by: string | null;
  created_at: number;
  updated_at: number;
}

/**
 * Notified when a value is set or removed (sent with the write, so it goes out at its commit).
 * The payload says nothing: listeners read the store again.
 */
export const SECRETS_CHANNEL = 'warden_secrets';
const CHANGED = { notify: SECRETS_CHANNEL, payload: '' };

const aad = (agentId: string, scope: string, name: string) => Buffer.from(JSON.stringify([agentId, scope, name]), 'utf8');

export class SecretStore {
  constructor(
    private readonly db: Db,
    private readonly key: Buffer,
  ) {
    if (key.length !== 32) throw new Error('the secret store key must be 32 bytes');
  }

  /** Sets (or replaces) a value; one conditional write, so two instances never both insert. */
  async set(entry: { agentId: string; scope?: string | undefined; name: string; value: string; setBy?: string | undefined }, now = Date.now()): Promise<void> {
    if (!SECRET_NAME.test(entry.name)) throw new Error(`secret name ${JSON.stringify(entry.name)} is not an environment variable name (A-Z, 0-9, _)`);
    const scope = entry.scope ?? '';
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(aad(entry.agentId, scope, entry.name));
    const ciphertext = Buffer.concat([cipher.update(entry.value, 'utf8'), cipher.final()]);
    await this.db.batch([
      {
        sql: `INSERT INTO secret_values (agent_id, scope, name, iv, tag, ciphertext, set_by, created_at, updated_at)
       VALUES (@agentId, @scope, @name, @iv, @tag, @ciphertext, @setBy, @now, @now)
       ON CONFLICT (agent_id, scope, name) DO UPDATE SET iv = excluded.iv, tag = excluded.tag, ciphertext = excluded.ciphertext, set_by = excluded.set_by, updated_at = excluded.updated_at`,
        params: { agentId: entry.agentId, scope, name: entry.name, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ciphertext: ciphertext.toString('base64'), setBy: entry.setBy ?? null, now },
      },
      CHANGED,
    ]);
  }

  /** Names and times, never values. */
  async list(filter: { agentId?: string | undefined } = {}): Promise<SecretEntry[]> {
    const rows = filter.agentId === undefined
      ? await this.db.all<Row>('SELECT * FROM secret_values ORDER BY agent_id, name, scope')
      : await this.db.all<Row>('SELECT * FROM secret_values WHERE agent_id = ? ORDER BY name, scope', [filter.agentId]);
    return rows.map((r) => ({ agentId: r.agent_id, scope: r.scope, name: r.name, setBy: r.set_by ?? undefined, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at) }));
  }

  async remove(agentId: string, name: string, scope = ''): Promise<boolean> {
    const [deleted] = await this.db.batch([{ sql: 'DELETE FROM secret_values WHERE agent_id = ? AND scope = ? AND name = ?', params: [agentId, scope, name] }, CHANGED]);
    return deleted!.changes > 0;
  }

  /**
   * Calls `handler` when a value is set or removed through any `SecretStore` on this store: in
   * this process, or in another one sharing its PostgreSQL server. Resolves to the unsubscribe
   * function.
   */
  watch(handler: () => void): Promise<() => Promise<void>> {
    return this.db.listen(SECRETS_CHANNEL, () => handler());
  }

  /**
   * A value for a call in a conversation: the conversation's own when it has one, else the
   * agent's. Undefined when unset; an error when the row does not decrypt (wrong key, tampered).
   */
  async get(agentId: string, name: string, sessionKey?: string | undefined): Promise<string | undefined> {
    const rows = await this.db.all<Row>('SELECT * FROM secret_values WHERE agent_id = ? AND name = ? AND (scope = ? OR scope = ?)', [agentId, name, '', sessionKey ?? '']);
    const row = rows.find((r) => r.scope !== '' && r.scope === sessionKey) ?? rows.find((r) => r.scope === '');
    return row ? this.decrypt(row) : undefined;
  }

  /** Every value with its name (to register as known secrets), undecryptable rows skipped. */
  async all(): Promise<Array<{ name: string; value: string }>> {
    const rows = await this.db.all<Row>('SELECT * FROM secret_values ORDER BY agent_id, scope, name');
    const out: Array<{ name: string; value: string }> = [];
    for (const r of rows) {
      try {
        out.push({ name: r.name, value: this.decrypt(r) });
      } catch {
        // A row under another key: it cannot leak what this process cannot read.
      }
    }
    return out;
  }

  private decrypt(r: Row): string {
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(r.iv, 'base64'));
    decipher.setAAD(aad(r.agent_id, r.scope, r.name));
    decipher.setAuthTag(Buffer.from(r.tag, 'base64'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(r.ciphertext, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`secret ${r.name} of agent ${r.agent_id} does not decrypt: the key changed (WARDEN_SECRETS_KEY or ${SECRETS_KEY_FILE}) or the row was altered`);
    }
  }
}
