import type { BatchStep, Db, SqlValue } from '../store/db.js';
import { rideAlong } from '../store/ride-along.js';
import type { FeatureMigrations, Migration } from '../store/migrations.js';
import type { CounterSpec } from './budgets.js';
import type { UsageRecord } from './types.js';

/**
 * Usage records (one row per model call) and budget counters (one row per scope, subject,
 * period and unit). A counter's row carries what settled calls spent, what calls in flight
 * hold (an upper bound of their cost, until `held_until`), and what approvers raised it by.
 */
const tables = (id: string, serial: string): Migration => ({
  id,
  async up(db) {
    await db.exec(`
      CREATE TABLE usage_records (
        id                  ${serial},
        at                  BIGINT NOT NULL,
        provider            TEXT NOT NULL,
        model               TEXT NOT NULL,
        purpose             TEXT NOT NULL,
        agent_id            TEXT NOT NULL,
        session_key         TEXT,
        platform            TEXT,
        sender_id           TEXT,
        sender_name         TEXT,
        channel_id          TEXT,
        guild_id            TEXT,
        input_tokens        BIGINT NOT NULL,
        output_tokens       BIGINT NOT NULL,
        cached_tokens       BIGINT NOT NULL,
        cache_write_tokens  BIGINT NOT NULL,
        reasoning_tokens    BIGINT NOT NULL,
        cost_nano           BIGINT,
        price_source        TEXT
      );
      CREATE INDEX usage_records_by_time ON usage_records (at);

      CREATE TABLE usage_counters (
        key         TEXT PRIMARY KEY,
        spent       BIGINT NOT NULL DEFAULT 0,
        held        BIGINT NOT NULL DEFAULT 0,
        held_until  BIGINT NOT NULL DEFAULT 0,
        raised      BIGINT NOT NULL DEFAULT 0,
        resets_at   BIGINT NOT NULL
      );

      CREATE TABLE usage_raises (
        approval_id  TEXT PRIMARY KEY,
        counter_key  TEXT NOT NULL,
        amount       BIGINT NOT NULL,
        state        TEXT NOT NULL CHECK (state IN ('pending', 'applied', 'closed')),
        created_at   BIGINT NOT NULL
      );
      CREATE INDEX usage_raises_by_counter ON usage_raises (counter_key, state);
    `);
  },
});

export const usageMigrations: FeatureMigrations = {
  feature: 'usage',
  sqlite: [tables('usage-001-records-counters-raises', 'INTEGER PRIMARY KEY AUTOINCREMENT')],
  postgres: [tables('usage-pg-001-records-counters-raises', 'BIGSERIAL PRIMARY KEY')],
};

/** A counter as stored, for `/usage` and the refusal text. */
export interface CounterState {
  spent: number;
  held: number;
  raised: number;
}

const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

export class UsageStore {
  constructor(readonly db: Db) {}

  /**
   * The admission of one call to its counters, as ONE conditional write: each row is created or
   * updated to add its `hold` only while what is spent plus what live holds keep plus `need` (the
   * prompt's estimated cost) stays below the cap plus any raise. Two instances admitting at once
   * are serialised row by row (keys in one order, so never deadlocked); at most one call's cost
   * can land past a cap (see the docs). Returns the keys NOT admitted; when some were, the holds
   * the write did place are given back before this returns.
   */
  async admit(items: ReadonlyArray<{ counter: CounterSpec; need: number; hold: number }>, now: number, holdUntil: number): Promise<string[]> {
    if (items.length === 0) return [];
    const sorted = [...items].sort((a, b) => (a.counter.key < b.counter.key ? -1 : a.counter.key > b.counter.key ? 1 : 0));
    const values = sorted.map(() => '(CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT))').join(', ');
    const params = sorted.flatMap((i) => [i.counter.key, i.hold, i.need, i.counter.cap, i.counter.window.end]);
    const rows = await this.db.all<{ key: string }>(
      `WITH v (key, hold, need, cap, resets) AS (VALUES ${values})
       INSERT INTO usage_counters (key, spent, held, held_until, raised, resets_at)
       SELECT v.key, 0, v.hold, CAST(? AS BIGINT), 0, v.resets FROM v
       WHERE v.need < v.cap OR EXISTS (SELECT 1 FROM usage_counters c WHERE c.key = v.key)
       ON CONFLICT (key) DO UPDATE SET
         held = (CASE WHEN usage_counters.held_until > CAST(? AS BIGINT) THEN usage_counters.held ELSE 0 END) + excluded.held,
         held_until = excluded.held_until
       WHERE usage_counters.spent + (CASE WHEN usage_counters.held_until > CAST(? AS BIGINT) THEN usage_counters.held ELSE 0 END)
             + (SELECT v.need FROM v WHERE v.key = excluded.key) < (SELECT v.cap FROM v WHERE v.key = excluded.key) + usage_counters.raised
       RETURNING key`,
      [...params, holdUntil, now, now],
    );
    const admitted = new Set(rows.map((r) => r.key));
    const refused = sorted.filter((i) => !admitted.has(i.counter.key)).map((i) => i.counter.key);
    if (refused.length > 0 && admitted.size > 0) await this.settle(sorted.filter((i) => admitted.has(i.counter.key)).map((i) => ({ key: i.counter.key, hold: i.hold, spent: 0 })));
    return refused;
  }

  /** Gives back each call's holds and adds what it really used: one write for all its counters. */
  async settle(items: ReadonlyArray<{ key: string; hold: number; spent: number }>): Promise<void> {
    const step = settleStep(items);
    if (step) await this.db.run(step.sql, step.params);
  }

  /**
   * An answered call: its usage record and its counters settled, in one transaction (both or
   * neither). With `conversation`, the two ride with that conversation's next write of this turn
   * of the event loop — the answer's transcript entry — and commit with it (`ride-along.ts`):
   * one commit for the answer and its cost. Resolves once committed.
   */
  async record(record: UsageRecord, settled: ReadonlyArray<{ key: string; hold: number; spent: number }>, conversation?: string): Promise<void> {
    const steps = [insertStep(record), ...[settleStep(settled)].filter((s) => s !== undefined)];
    await (conversation === undefined ? this.db.batch(steps) : rideAlong(this.db, conversation, steps));
  }

  async get(key: string): Promise<CounterState | undefined> {
    const row = await this.db.get<Record<string, unknown>>('SELECT spent, held, held_until AS "heldUntil", raised FROM usage_counters WHERE key = ?', [key]);
    if (!row) return undefined;
    return { spent: n(row.spent), held: n(row.heldUntil) > Date.now() ? n(row.held) : 0, raised: n(row.raised) };
  }

  async insert(record: UsageRecord): Promise<void> {
    const step = insertStep(record);
    await this.db.run(step.sql, step.params);
  }

  /** The raise an approver may grant for `key`, recorded with its card's id. */
  async addRaise(approvalId: string, key: string, amount: number, now: number): Promise<void> {
    await this.db.run("INSERT INTO usage_raises (approval_id, counter_key, amount, state, created_at) VALUES (?, ?, ?, 'pending', ?)", [approvalId, key, amount, now]);
  }

  async pendingRaises(key: string): Promise<Array<{ approvalId: string; amount: number }>> {
    const rows = await this.db.all<{ approvalId: string; amount: unknown }>(`SELECT approval_id AS "approvalId", amount FROM usage_raises WHERE counter_key = ? AND state = 'pending' ORDER BY created_at`, [key]);
    return rows.map((r) => ({ approvalId: r.approvalId, amount: n(r.amount) }));
  }

  /**
   * Applies an approved raise once, whichever instance sees the approval first: the raise row
   * moves from pending to applied (a conditional write) and only the mover adds to the counter.
   */
  async applyRaise(approvalId: string, key: string, amount: number): Promise<boolean> {
    return this.db.tx(async () => {
      const moved = await this.db.run("UPDATE usage_raises SET state = 'applied' WHERE approval_id = ? AND state = 'pending'", [approvalId]);
      if (moved.changes !== 1) return false;
      await this.db.run('UPDATE usage_counters SET raised = raised + ? WHERE key = ?', [amount, key]);
      return true;
    });
  }

  async closeRaise(approvalId: string): Promise<void> {
    await this.db.run("UPDATE usage_raises SET state = 'closed' WHERE approval_id = ? AND state = 'pending'", [approvalId]);
  }
}

/** The counters' settle as one statement; undefined when the call was charged to none. */
function settleStep(items: ReadonlyArray<{ key: string; hold: number; spent: number }>): Extract<BatchStep, { sql: string }> | undefined {
  if (items.length === 0) return undefined;
  const sorted = [...items].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const values = sorted.map(() => '(CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT))').join(', ');
  return {
    sql: `WITH v (key, hold, spent) AS (VALUES ${values})
       UPDATE usage_counters SET spent = usage_counters.spent + v.spent, held = CASE WHEN usage_counters.held > v.hold THEN usage_counters.held - v.hold ELSE 0 END
       FROM v WHERE usage_counters.key = v.key`,
    params: sorted.flatMap((i) => [i.key, i.hold, i.spent]),
  };
}

function insertStep(record: UsageRecord): Extract<BatchStep, { sql: string }> & { params: SqlValue[] } {
  const a = record.attribution;
  const u = record.usage;
  return {
    sql: `INSERT INTO usage_records (at, provider, model, purpose, agent_id, session_key, platform, sender_id, sender_name, channel_id, guild_id,
         input_tokens, output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost_nano, price_source)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    params: [
      record.at, record.provider, record.model, a.purpose, a.agentId, a.sessionKey ?? null, a.platform ?? null, a.senderId ?? null, a.senderName ?? null,
      a.channelId ?? null, a.guildId ?? null, u.inputTokens, u.outputTokens, u.cachedInputTokens ?? 0, u.cacheWriteTokens ?? 0, u.reasoningTokens ?? 0,
      record.costNano ?? null, record.priceSource ?? null,
    ],
  };
}
