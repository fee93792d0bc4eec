/**
 * The one interface every durable feature talks to, whatever engine is underneath: SQLite
 * embedded in the process (the default) or a PostgreSQL server shared by several instances.
 *
 * SQL is written once, in the dialect both engines accept: `?` for positional parameters or
 * `@name` for named ones (never both in one statement), `RETURNING` for generated ids,
 * `ON CONFLICT … DO NOTHING|UPDATE`, `IS [NOT] DISTINCT FROM`, aliased subqueries, and
 * double-quoted camelCase aliases. What one engine cannot say the other's way is a property of
 * the handle (`forUpdate`), never a branch in feature code.
 *
 * Transactions follow the caller: inside `tx(fn)`, every call on the same handle made while
 * `fn` runs — however deep, in whichever module — joins the transaction (an AsyncLocalStorage
 * context), and a nested `tx` is a savepoint. A transaction's body touches only the database:
 * on SQLite it holds the process's only connection, on PostgreSQL a pooled one, until it ends.
 */
export type SqlValue = string | number | bigint | null | Uint8Array;
export type SqlParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

export interface RunResult {
  /** Rows the statement inserted, changed or deleted. */
  changes: number;
}

export type StoreEngine = 'sqlite' | 'postgres';

/** One step of a `batch`: a statement, or a notification sent when the batch commits. */
export type BatchStep = { sql: string; params?: SqlParams } | { notify: string; payload: string };

/**
 * A batch that failed: `step` is the index of the step that failed (the steps before it were
 * rolled back with it; the ones after never ran), `cause` the engine's error.
 */
export class BatchStepError extends Error {
  constructor(
    readonly step: number,
    cause: unknown,
  ) {
    super(`batch step ${step + 1} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'BatchStepError';
  }
}

/** What one step of a `batch` gave: its rows (statements that return some) and the rows it changed. */
export interface BatchResult {
  rows: Array<Record<string, unknown>>;
  changes: number;
}

/** Called with a notification's payload; `undefined` when notifications may have been missed (a reconnect): look again. */
export type NotificationHandler = (payload: string | undefined) => void;

export interface Db {
  readonly engine: StoreEngine;
  /**
   * Whether other Warden instances may share this store. On a shared store, what one process
   * used to keep to itself (a session's turn, a cron slot, a waiting approval) goes through
   * leases and notifications; on an unshared one (SQLite) the process is the only server.
   */
  readonly shared: boolean;
  /** Appended to a SELECT inside a transaction to hold its rows until the end (PostgreSQL `FOR UPDATE`; SQLite's write transaction already holds the database). */
  readonly forUpdate: string;
  /** False once closed. */
  readonly open: boolean;
  /** Whether the caller runs inside an open transaction of this handle (a statement issued now would join it). */
  readonly inTransaction: boolean;

  all<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T | undefined>;
  /** The first column of the first row. */
  value<T = unknown>(sql: string, params?: SqlParams): Promise<T | undefined>;
  run(sql: string, params?: SqlParams): Promise<RunResult>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it rejects. */
  tx<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Steps none of which needs an earlier one's answer, as one transaction (all or none; the
   * first failure rejects with a `BatchStepError` naming the step), with one round trip where the
   * engine allows: PostgreSQL gets the statements in one write ending in one Sync, which runs
   * them as one implicit transaction (no BEGIN/COMMIT of their own). Inside an open transaction
   * the steps join it. Results come back in step order (a notification's is empty).
   */
  batch(steps: readonly BatchStep[]): Promise<BatchResult[]>;
  /**
   * Runs `fn` holding the store's migration lock (a PostgreSQL advisory lock on a connection of
   * its own; on SQLite each migration's write transaction is the lock), so two instances never
   * migrate at once.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;

  /** Tells every listener of `channel`, in this process and others sharing the store; inside a transaction, at commit. */
  notify(channel: string, payload: string): Promise<void>;
  /** Subscribes to `channel`; resolves once subscribed, to the unsubscribe function. */
  listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>>;

  /** Sees every statement's duration (the metrics' store latency). */
  observe(observer: QueryObserver | undefined): void;
  close(): Promise<void>;
}

export type QueryObserver = (op: 'all' | 'get' | 'value' | 'run' | 'exec' | 'tx', durationMs: number, ok: boolean) => void;

/** Named parameters are written `@name`; positional ones `?`. */
export const isNamed = (params: SqlParams | undefined): params is Readonly<Record<string, SqlValue>> =>
  params !== undefined && !Array.isArray(params) && !(params instanceof Uint8Array);
