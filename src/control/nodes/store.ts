import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../store/db.js';
import type { FeatureMigrations, Migration } from '../../store/migrations.js';

export const nodesMigration: Migration = {
  id: 'nodes-001-paired-nodes',
  async up(db) {
    await db.exec(`
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

const nodesPg001: Migration = {
  id: 'nodes-pg-001-paired-nodes',
  async up(db) {
    await db.exec(`
      CREATE TABLE paired_nodes (
        name          TEXT PRIMARY KEY,
        token_hash    TEXT NOT NULL,
        paired_at     BIGINT NOT NULL,
        paired_by     TEXT NOT NULL,
        revoked_at    BIGINT,
        revoked_by    TEXT,
        last_seen_at  BIGINT,
        last_address  TEXT
      );
    `);
  },
};

export const nodesMigrations: FeatureMigrations = { feature: 'nodes', sqlite: [nodesMigration], postgres: [nodesPg001] };

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
  constructor(private readonly db: Db) {}

  /** Pairs (or pairs again after a revocation) and returns the new token, shown to the node once. */
  async pair(name: string, by: string, at = Date.now()): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.db.run(
      `INSERT INTO paired_nodes (name, token_hash, paired_at, paired_by) VALUES (?, ?, ?, ?)
       ON CONFLICT(name) DO UPDATE SET token_hash = excluded.token_hash, paired_at = excluded.paired_at, paired_by = excluded.paired_by, revoked_at = NULL, revoked_by = NULL`,
      [name, hash(token).toString('hex'), at, by],
    );
    return token;
  }

  /** Whether `token` is the live token of `name` (compared as fixed-length digests, in constant time). */
  async verify(name: string, token: string): Promise<boolean> {
    const row = await this.db.get<Row>('SELECT * FROM paired_nodes WHERE name = ?', [name]);
    const presented = hash(token);
    const stored = row ? Buffer.from(row.token_hash, 'hex') : Buffer.alloc(32);
    const same = stored.length === presented.length && timingSafeEqual(stored, presented);
    return row !== undefined && row.revoked_at === null && same;
  }

  async get(name: string): Promise<PairedNode | undefined> {
    const row = await this.db.get<Row>('SELECT * FROM paired_nodes WHERE name = ?', [name]);
    return row ? view(row) : undefined;
  }

  async list(): Promise<PairedNode[]> {
    return (await this.db.all<Row>('SELECT * FROM paired_nodes ORDER BY name')).map(view);
  }

  async revoke(name: string, by: string, at = Date.now()): Promise<boolean> {
    return (await this.db.run('UPDATE paired_nodes SET revoked_at = ?, revoked_by = ? WHERE name = ? AND revoked_at IS NULL', [at, by, name])).changes === 1;
  }

  async seen(name: string, address: string | undefined, at = Date.now()): Promise<void> {
    await this.db.run('UPDATE paired_nodes SET last_seen_at = ?, last_address = ? WHERE name = ?', [at, address ?? null, name]);
  }
}
