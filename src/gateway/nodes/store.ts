import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Migration } from '../../store/migrations.js';

export const nodesMigration: Migration = {
  id: 'nodes-001-paired-nodes',
  up(db) {
    db.exec(`
      CREATE TABLE paired_nodes (
        name          TEXT PRIMARY KEY,
        token_hash    TEXT NOT NULL,   -- sha256 of the node's token, hex; the token itself is never stored
        paired_at     INTEGER NOT NULL,
        paired_by     TEXT NOT NULL,
        revoked_at    INTEGER,
        revoked_by    TEXT,
        last_seen_at  INTEGER,
        last_address  TEXT
      );
    `);
  },
};

export interface PairedNode {
  name: string;
  pairedAt: number;
  pairedBy: string;
  revokedAt?: number | undefined;
  revokedBy?: string | undefined;
  lastSeenAt?: number | undefined;
  lastAddress?: string | undefined;
}

interface Row {
  name: string;
  token_hash: string;
  paired_at: number;
  paired_by: string;
  revoked_at: number | null;
  revoked_by: string | null;
  last_seen_at: number | null;
  last_address: string | null;
}

const hash = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

const view = (r: Row): PairedNode => ({
  name: r.name,
  pairedAt: r.paired_at,
  pairedBy: r.paired_by,
  revokedAt: r.revoked_at ?? undefined,
  revokedBy: r.revoked_by ?? undefined,
  lastSeenAt: r.last_seen_at ?? undefined,
  lastAddress: r.last_address ?? undefined,
});

/** Paired nodes and their tokens' hashes. A revoked node stays listed, and its token never works again. */
export class NodeStore {
  constructor(private readonly db: Database) {}

  /** Pairs (or pairs again after a revocation) and returns the new token, shown to the node once. */
  pair(name: string, by: string, at = Date.now()): string {
    const token = randomBytes(32).toString('base64url');
    this.db
      .prepare(
        `INSERT INTO paired_nodes (name, token_hash, paired_at, paired_by) VALUES (?, ?, ?, ?)
         ON CONFLICT(name) DO UPDATE SET token_hash = excluded.token_hash, paired_at = excluded.paired_at, paired_by = excluded.paired_by, revoked_at = NULL, revoked_by = NULL`,
      )
      .run(name, hash(token).toString('hex'), at, by);
    return token;
  }

  /** Whether `token` is the live token of `name` (compared as fixed-length digests, in constant time). */
  verify(name: string, token: string): boolean {
    const row = this.db.prepare('SELECT * FROM paired_nodes WHERE name = ?').get(name) as Row | undefined;
    const presented = hash(token);
    const stored = row ? Buffer.from(row.token_hash, 'hex') : Buffer.alloc(32);
    const same = stored.length === presented.length && timingSafeEqual(stored, presented);
    return row !== undefined && row.revoked_at === null && same;
  }

  get(name: string): PairedNode | undefined {
    const row = this.db.prepare('SELECT * FROM paired_nodes WHERE name = ?').get(name) as Row | undefined;
    return row ? view(row) : undefined;
  }

  list(): PairedNode[] {
    return (this.db.prepare('SELECT * FROM paired_nodes ORDER BY name').all() as Row[]).map(view);
  }

  revoke(name: string, by: string, at = Date.now()): boolean {
    return this.db.prepare('UPDATE paired_nodes SET revoked_at = ?, revoked_by = ? WHERE name = ? AND revoked_at IS NULL').run(at, by, name).changes === 1;
  }

  seen(name: string, address: string | undefined, at = Date.now()): void {
    this.db.prepare('UPDATE paired_nodes SET last_seen_at = ?, last_address = ? WHERE name = ?').run(at, address ?? null, name);
  }
}
