import { FrameContext } from '../frame-context.js';
import { performance } from 'node:perf_hooks';
import type BetterSqlite3 from 'better-sqlite3';
import { BatchStepError, isNamed, type BatchResult, type BatchStep, type Db, type NotificationHandler, type QueryObserver, type RunResult, type SqlParams } from '../db.js';

/** An open transaction: the calls made inside it (its async context) use the connection directly. */
interface Frame {
  savepoints: number;
  /** Notifications sent inside the transaction, delivered once it commits. */
  after: Array<() => void>;
}

/** Prepared statements kept per SQL text; beyond this many the oldest are dropped. */
const STATEMENT_CACHE = 500;

/**
 * The embedded engine: better-sqlite3's synchronous API behind the async interface. A call
 * outside any transaction runs at once, before the returned promise settles, so the cost over
 * the synchronous library is one settled promise. While a transaction is open its body may
 * await; other callers' statements then wait their turn (they would otherwise land inside it,
 * on the one connection) and run, in order, once it ends.
 */
export class SqliteDb implements Db {
  readonly engine = 'sqlite' as const;
  readonly shared = false;
  readonly forUpdate = '';

  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  private readonly plucked = new Map<string, BetterSqlite3.Statement>();
  private readonly context = new FrameContext<Frame>();
  private active: Frame | undefined;
  private readonly waiting: Array<() => void> = [];
  private readonly channels = new Map<string, Set<NotificationHandler>>();
  private observer: QueryObserver | undefined;

  constructor(readonly raw: BetterSqlite3.Database) {}

  get open(): boolean {
    return this.raw.open;
  }

  get inTransaction(): boolean {
    const frame = this.context.current();
    return frame !== undefined && frame === this.active;
  }

  all<T>(sql: string, params?: SqlParams): Promise<T[]> {
    return this.call('all', () => bind(this.statement(sql), params, 'all') as T[]);
  }

  get<T>(sql: string, params?: SqlParams): Promise<T | undefined> {
    return this.call('get', () => bind(this.statement(sql), params, 'get') as T | undefined);
  }

  value<T>(sql: string, params?: SqlParams): Promise<T | undefined> {
    return this.call('value', () => bind(this.pluckStatement(sql), params, 'get') as T | undefined);
  }

  run(sql: string, params?: SqlParams): Promise<RunResult> {
    return this.call('run', () => ({ changes: (bind(this.statement(sql), params, 'run') as BetterSqlite3.RunResult).changes }));
  }

  exec(sql: string): Promise<void> {
    return this.call('exec', () => {
      this.raw.exec(sql);
    });
  }

  tx<T>(fn: () => Promise<T>): Promise<T> {
    const current = this.context.current();
    if (current !== undefined && current === this.active) return this.savepoint(current, fn);
    const frame: Frame = { savepoints: 0, after: [] };
    if (this.active === undefined && this.waiting.length === 0) {
      this.active = frame;
      return this.transaction(frame, fn);
    }
    return new Promise<T>((resolve, reject) => {
      this.waiting.push(() => {
        this.active = frame;
        this.transaction(frame, fn).then(resolve, reject);
      });
    });
  }

  batch(steps: readonly BatchStep[]): Promise<BatchResult[]> {
    // In process there is no round trip to save: one transaction, the steps in order.
    return this.tx(async () => {
      const out: BatchResult[] = [];
      for (const [i, step] of steps.entries()) {
        try {
          if ('notify' in step) {
            await this.notify(step.notify, step.payload);
            out.push({ rows: [], changes: 0 });
            continue;
          }
          const stmt = this.statement(step.sql);
          if (stmt.reader) {
            // A statement with rows (a SELECT, or a write with RETURNING) counts them, as PostgreSQL does.
            const rows = bind(stmt, step.params, 'all') as Array<Record<string, unknown>>;
            out.push({ rows, changes: rows.length });
          }
          else out.push({ rows: [], changes: (bind(stmt, step.params, 'run') as BetterSqlite3.RunResult).changes });
        } catch (err) {
          // Which step failed, as PostgreSQL reports it; the transaction takes the steps before it back.
          throw new BatchStepError(i, err);
        }
      }
      return out;
    });
  }

  /** One process, one writer per statement; a migration's own write transaction is the lock. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  notify(channel: string, payload: string): Promise<void> {
    const deliver = () => {
      for (const handler of [...(this.channels.get(channel) ?? [])]) handler(payload);
    };
    const frame = this.context.current();
    if (frame !== undefined && frame === this.active) frame.after.push(deliver);
    else queueMicrotask(deliver);
    return Promise.resolve();
  }

  listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>> {
    let set = this.channels.get(channel);
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(handler);
    return Promise.resolve(async () => {
      set.delete(handler);
    });
  }

  observe(observer: QueryObserver | undefined): void {
    this.observer = observer;
  }

  close(): Promise<void> {
    this.statements.clear();
    this.plucked.clear();
    if (this.raw.open) this.raw.close();
    return Promise.resolve();
  }

  /** Runs `op` now, or after the open transaction when the caller is not part of it. */
  private call<T>(kind: Parameters<QueryObserver>[0], op: () => T): Promise<T> {
    const run = this.observer ? this.timed(kind, op) : op;
    if (this.active !== undefined && this.context.current() !== this.active) {
      return new Promise<T>((resolve, reject) => {
        this.waiting.push(() => {
          try {
            resolve(run());
          } catch (err) {
            reject(err as Error);
          }
        });
      });
    }
    try {
      return Promise.resolve(run());
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  private timed<T>(kind: Parameters<QueryObserver>[0], op: () => T): () => T {
    return () => {
      const started = performance.now();
      let ok = false;
      try {
        const out = op();
        ok = true;
        return out;
      } finally {
        this.observer?.(kind, performance.now() - started, ok);
      }
    };
  }

  private async transaction<T>(frame: Frame, fn: () => Promise<T>): Promise<T> {
    const started = this.observer ? performance.now() : 0;
    let ok = false;
    try {
      // IMMEDIATE: the write lock is taken at BEGIN (waiting up to busy_timeout for another
      // process), so a transaction that reads and then writes never fails half-way on SQLITE_BUSY.
      this.raw.exec('BEGIN IMMEDIATE');
      let result: T;
      try {
        result = await this.context.run(frame, fn);
        this.raw.exec('COMMIT');
      } catch (err) {
        if (this.raw.inTransaction) this.raw.exec('ROLLBACK');
        throw err;
      }
      ok = true;
      for (const deliver of frame.after) queueMicrotask(deliver);
      return result;
    } finally {
      if (this.observer) this.observer('tx', performance.now() - started, ok);
      this.active = undefined;
      this.drain();
    }
  }

  private async savepoint<T>(frame: Frame, fn: () => Promise<T>): Promise<T> {
    const name = `sp${++frame.savepoints}`;
    this.raw.exec(`SAVEPOINT ${name}`);
    try {
      const result = await fn();
      this.raw.exec(`RELEASE ${name}`);
      return result;
    } catch (err) {
      this.raw.exec(`ROLLBACK TO ${name}`);
      this.raw.exec(`RELEASE ${name}`);
      throw err;
    } finally {
      frame.savepoints--;
    }
  }

  /** What waited for the transaction runs in order, until one of them opens the next. */
  private drain(): void {
    while (this.active === undefined && this.waiting.length > 0) this.waiting.shift()!();
  }

  private statement(sql: string): BetterSqlite3.Statement {
    return cached(this.statements, sql, () => this.raw.prepare(sql));
  }

  private pluckStatement(sql: string): BetterSqlite3.Statement {
    return cached(this.plucked, sql, () => this.raw.prepare(sql).pluck());
  }
}

function cached(cache: Map<string, BetterSqlite3.Statement>, sql: string, make: () => BetterSqlite3.Statement): BetterSqlite3.Statement {
  let stmt = cache.get(sql);
  if (stmt === undefined) {
    stmt = make();
    if (cache.size >= STATEMENT_CACHE) cache.delete(cache.keys().next().value as string);
    cache.set(sql, stmt);
  }
  return stmt;
}

function bind(stmt: BetterSqlite3.Statement, params: SqlParams | undefined, how: 'all' | 'get' | 'run'): unknown {
  if (params === undefined) return stmt[how]();
  if (isNamed(params)) return stmt[how](params);
  return stmt[how](...(params as unknown[]));
}
