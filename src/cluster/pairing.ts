import { randomInt } from 'node:crypto';
import type { Db } from '../store/db.js';
import type { FeatureMigrations, Migration } from '../store/migrations.js';

/**
 * DM pairing (OpenClaw's `dmPolicy: "pairing"`): an unknown sender's DM gets a one-time code; an
 * owner approves it with `/pair <code>` and the sender is paired on that platform from then on.
 * Codes are 8 characters of an alphabet without look-alikes (`0O1I`), expire after an hour, one
 * pending code per sender (a second DM within the hour gets no new code and no new message) and
 * at most 3 pending per platform — OpenClaw's numbers. Kept in the store, so every instance on
 * one PostgreSQL sees the same requests and pairings.
 */
const tables = (bigint: string) => `
  CREATE TABLE pairing_requests (
    code       TEXT PRIMARY KEY,
    provider   TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    user_name  TEXT,
    created_at ${bigint} NOT NULL,
    expires_at ${bigint} NOT NULL
  );
  CREATE UNIQUE INDEX pairing_requests_sender ON pairing_requests (provider, user_id);
  CREATE TABLE paired_senders (
    provider    TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    approved_by TEXT NOT NULL,
    approved_at ${bigint} NOT NULL,
    PRIMARY KEY (provider, user_id)
  );
`;

const sqlite001: Migration = { id: 'pairing-001-requests', up: (db) => db.exec(tables('INTEGER')) };
const pg001: Migration = { id: 'pairing-pg-001-requests', up: (db) => db.exec(tables('BIGINT')) };
export const pairingMigrations: FeatureMigrations = { feature: 'pairing', sqlite: [sqlite001], postgres: [pg001] };

export const PAIRING_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const PAIRING_CODE_LENGTH = 8;
export const PAIRING_TTL_MS = 60 * 60 * 1000;
export const PAIRING_MAX_PENDING = 3;

export type PairingRequestOutcome =
  | { kind: 'created'; code: string; expiresAt: number }
  /** A code was already handed out to this sender and is still valid: nothing new is said. */
  | { kind: 'pending' }
  /** Too many codes wait on this platform; the sender is told nothing until one expires. */
  | { kind: 'full' };

export type PairingApproveOutcome = { ok: true; provider: string; userId: string; userName?: string | undefined } | { ok: false; reason: 'unknown-code' | 'other-platform' };

/** A fresh code; `randomInt` is uniform (no modulo bias), 32^8 ≈ 10^12 codes. */
export function newPairingCode(): string {
  let code = '';
  for (let i = 0; i < PAIRING_CODE_LENGTH; i++) code += PAIRING_ALPHABET[randomInt(PAIRING_ALPHABET.length)];
  return code;
}

/** A typed code as stored: upper case, spaces and dashes dropped; undefined when it cannot be a code. */
export function normalizeCode(raw: string): string | undefined {
  let out = '';
  for (const ch of raw.toUpperCase()) {
    if (ch === ' ' || ch === '-') continue;
    if (!PAIRING_ALPHABET.includes(ch)) return undefined;
    out += ch;
  }
  return out.length === PAIRING_CODE_LENGTH ? out : undefined;
}

export class PairingStore {
  constructor(
    private readonly db: Db,
    private readonly options: { ttlMs?: number; maxPending?: number; now?: () => number } = {},
  ) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  async isPaired(provider: string, userId: string): Promise<boolean> {
    return (await this.db.value('SELECT 1 FROM paired_senders WHERE provider = ? AND user_id = ?', [provider, userId])) !== undefined;
  }

  /** A code for an unknown sender, or why none is handed out. */
  async request(provider: string, userId: string, userName?: string): Promise<PairingRequestOutcome> {
    const now = this.now();
    await this.db.run('DELETE FROM pairing_requests WHERE expires_at <= ?', [now]);
    if ((await this.db.value('SELECT 1 FROM pairing_requests WHERE provider = ? AND user_id = ?', [provider, userId])) !== undefined) return { kind: 'pending' };
    const pending = Number((await this.db.value('SELECT COUNT(*) FROM pairing_requests WHERE provider = ?', [provider])) ?? 0);
    if (pending >= (this.options.maxPending ?? PAIRING_MAX_PENDING)) return { kind: 'full' };
    const expiresAt = now + (this.options.ttlMs ?? PAIRING_TTL_MS);
    const code = newPairingCode();
    // The sender index makes a racing second instance's insert a no-op: one code per sender.
    const inserted = await this.db.run(
      'INSERT INTO pairing_requests (code, provider, user_id, user_name, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [code, provider, userId, userName ?? null, now, expiresAt],
    );
    return inserted.changes === 1 ? { kind: 'created', code, expiresAt } : { kind: 'pending' };
  }

  /**
   * An owner's approval: the code's request is consumed (one use) and its sender paired. The
   * owner must be an owner on the code's platform (the caller checked ownership on `provider`).
   */
  approve(rawCode: string, provider: string, approvedBy: string): Promise<PairingApproveOutcome> {
    return this.consume(rawCode, provider, async (row, now) => {
      await this.db.run('INSERT INTO paired_senders (provider, user_id, approved_by, approved_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', [row.provider, row.user_id, approvedBy, now]);
    });
  }

  /**
   * An owner's refusal: the code's request is consumed (one use, the same conditional delete as
   * `approve`) and nobody is paired. The sender may ask again once their next DM gets a new code.
   */
  deny(rawCode: string, provider: string): Promise<PairingApproveOutcome> {
    return this.consume(rawCode, provider, async () => {});
  }

  /**
   * Takes a live code's request in one locked transaction (the conditional delete is what makes a
   * decision happen once across clicks and instances), then runs `decided` inside it.
   */
  private async consume(
    rawCode: string,
    provider: string,
    decided: (row: { provider: string; user_id: string }, now: number) => Promise<void>,
  ): Promise<PairingApproveOutcome> {
    const code = normalizeCode(rawCode);
    if (!code) return { ok: false, reason: 'unknown-code' };
    const now = this.now();
    return this.db.tx(async () => {
      const row = await this.db.get<{ provider: string; user_id: string; user_name: string | null }>(
        `SELECT provider, user_id, user_name FROM pairing_requests WHERE code = ? AND expires_at > ? ${this.db.forUpdate}`,
        [code, now],
      );
      if (!row) return { ok: false as const, reason: 'unknown-code' as const };
      if (row.provider !== provider) return { ok: false as const, reason: 'other-platform' as const };
      const deleted = await this.db.run('DELETE FROM pairing_requests WHERE code = ?', [code]);
      if (deleted.changes !== 1) return { ok: false as const, reason: 'unknown-code' as const };
      await decided(row, now);
      return { ok: true as const, provider: row.provider, userId: row.user_id, userName: row.user_name ?? undefined };
    });
  }

  /** Pending requests, oldest first (for `/pair` without a code). */
  async pending(provider: string): Promise<Array<{ code: string; userId: string; userName?: string | undefined; expiresAt: number }>> {
    const rows = await this.db.all<{ code: string; user_id: string; user_name: string | null; expires_at: number }>(
      'SELECT code, user_id, user_name, expires_at FROM pairing_requests WHERE provider = ? AND expires_at > ? ORDER BY created_at',
      [provider, this.now()],
    );
    return rows.map((r) => ({ code: r.code, userId: r.user_id, userName: r.user_name ?? undefined, expiresAt: Number(r.expires_at) }));
  }
}
