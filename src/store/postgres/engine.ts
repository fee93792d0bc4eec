import { FrameContext } from '../frame-context.js';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { log } from '../../log/log.js';
import { BatchStepError, isNamed, type BatchResult, type BatchStep, type Db, type NotificationHandler, type QueryObserver, type RunResult, type SqlParams, type SqlValue } from '../db.js';
import { rewritePlaceholders, type Rewritten } from './placeholders.js';
import { BatchQuery, type WireStatement, type WireValue } from './batch-query.js';
import { background } from '../../util/background.js';

/** A connection taken from the pool for a transaction, or for the migration lock. */
interface Frame {
  client: pg.PoolClient;
  inTx: boolean;
  savepoints: number;
  done: boolean;
}

/**
 * A statement text as it goes on the wire, worked out once per text: its `$n` text, its name
 * while under the bound of named statements, and where its values come from.
 */
interface Statement extends Rewritten {
  name: string | undefined;
}

/** The key of the advisory lock migrations run under (any constant; "warden" in ASCII). */
const MIGRATION_LOCK = 0x77617264656e;
const REWRITE_CACHE = 1000;
/**
 * Statement texts run as named (prepared) statements: parsed and planned once per connection.
 * Bounded because each connection keeps every statement it prepared until it closes; texts seen
 * after this many run unnamed (parsed each time), as every text did before.
 */
const NAMED_STATEMENTS = 400;
const INT8_OID = 20;
const NOTIFY_SQL = 'SELECT pg_notify($1, $2)';
/**
 * A lane whose oldest unanswered statement is older than this is passed over for the next one:
 * a statement waiting on a lock (or a slow scan) holds up only what was written behind it.
 */
const LANE_STALL_MS = 10;

/**
 * A connection shared by the statements and batches run outside a transaction. Pipelined: each
 * statement is written without waiting for the answers before it, and the statements issued in
 * one turn of the event loop leave in one write (the socket is corked until the loop's check
 * phase) — several conversations' store work in one round trip. A batch is written in one
 * piece ending in its own Sync (one implicit transaction), so nothing of another caller lands
 * inside its transaction.
 */
interface Lane {
  client: pg.Client;
  ready: Promise<pg.Client>;
  /** When each unanswered statement was written, oldest first (a pipeline answers in order). */
  pending: number[];
  /** Set once connected: statements are written at once, without waiting on `ready`. */
  connected: boolean;
  corked: boolean;
  broken: boolean;
}

export interface PostgresOptions {
  connectionString: string;
  /**
   * Connections to the server (default 10; the notification connection aside): up to half are
   * shared pipelined lanes for statements outside transactions, the rest a pool for transactions.
   */
  poolMax?: number | undefined;
  /** How long a caller waits for a free connection, or for the server at connect (default 10 s). */
  connectTimeoutMs?: number | undefined;
}

/**
 * The shared engine, on node-postgres with its pool. Statements are the same as on SQLite
 * (parameter marks are renumbered once per text); `BIGINT` columns come back as numbers
 * (millisecond times and counts stay far below 2^53). LISTEN runs on one connection of its own,
 * reconnected with backoff; after a reconnect each handler is called without a payload, since
 * notifications sent in between were lost.
 */
export class PostgresDb implements Db {
  readonly engine = 'postgres' as const;
  readonly shared = true;
  readonly forUpdate = ' FOR UPDATE';

  private readonly pool: pg.Pool;
  private readonly lanes: Lane[] = [];
  private readonly laneCount: number;
  private readonly context = new FrameContext<Frame>();
  private readonly statements = new Map<string, Statement>();
  private readonly names = new Map<string, string>();
  private readonly channels = new Map<string, Set<NotificationHandler>>();
  private listener: pg.Client | undefined;
  private listening: Promise<pg.Client> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectDelay = 250;
  private closed = false;
  private observer: QueryObserver | undefined;

  get open(): boolean {
    return !this.closed;
  }

  get inTransaction(): boolean {
    return this.live()?.inTx === true;
  }

  constructor(private readonly options: PostgresOptions) {
    const max = options.poolMax ?? 10;
    // Lanes beyond the first open only while every open one is held up (see `lane`), so a quiet
    // instance writes through one; half the connections leaves the other half for transactions.
    this.laneCount = Math.max(1, Math.floor(max / 2));
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: Math.max(1, max - this.laneCount),
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      idleTimeoutMillis: 30_000,
      application_name: 'warden',
      // Statements issued without awaiting the previous one go out together (a transaction's
      // BEGIN with its first statement, a batch in one write); awaited ones behave as before.
      pipeline: true,
      types: { getTypeParser: typeParser } as pg.CustomTypesConfig,
    });
    // An idle connection the server dropped: the pool replaces it; without a listener it would crash the process.
    this.pool.on('error', (err) => log.warn({ err: err.message }, 'postgres: an idle connection failed; the pool replaces it'));
  }

  async all<T>(sql: string, params?: SqlParams): Promise<T[]> {
    return (await this.query('all', sql, params)).rows as T[];
  }

  async get<T>(sql: string, params?: SqlParams): Promise<T | undefined> {
    return (await this.query('get', sql, params)).rows[0] as T | undefined;
  }

  async value<T>(sql: string, params?: SqlParams): Promise<T | undefined> {
    const result = await this.query('value', sql, params, true);
    const row = result.rows[0] as unknown[] | undefined;
    return row?.[0] as T | undefined;
  }

  async run(sql: string, params?: SqlParams): Promise<RunResult> {
    return { changes: (await this.query('run', sql, params)).rowCount ?? 0 };
  }

  async exec(sql: string): Promise<void> {
    const started = performance.now();
    let ok = false;
    try {
      await this.target().query(sql);
      ok = true;
    } finally {
      this.observer?.('exec', performance.now() - started, ok);
    }
  }

  async tx<T>(fn: () => Promise<T>): Promise<T> {
    const current = this.live();
    if (current?.inTx) return this.savepoint(current, fn);
    if (current) return this.transaction(current, fn);
    const client = await this.pool.connect();
    const frame: Frame = { client, inTx: false, savepoints: 0, done: false };
    try {
      return await this.context.run(frame, () => this.transaction(frame, fn));
    } finally {
      frame.done = true;
      client.release();
    }
  }

  async batch(steps: readonly BatchStep[]): Promise<BatchResult[]> {
    const started = performance.now();
    let ok = false;
    try {
      if (steps.length === 0) return [];
      // Every statement's text and values first: a step that cannot be sent fails the batch
      // before anything of it is on the wire.
      let notifies = false;
      const statements: WireStatement[] = new Array(steps.length);
      for (let i = 0; i < steps.length; i++) {
        const step = steps[i]!;
        if ('notify' in step) {
          notifies = true;
          const notify = this.statement(NOTIFY_SQL);
          statements[i] = { name: notify.name, text: notify.text, values: [toWire(step.notify), toWire(step.payload)] };
          continue;
        }
        try {
          const statement = this.statement(step.sql);
          statements[i] = { name: statement.name, text: statement.text, values: valuesOf(statement, step.params) };
        } catch (err) {
          throw new BatchStepError(i, err);
        }
      }
      // One write, one Sync: the server runs the steps as one implicit transaction (inside an open
      // transaction they join it). A failed step rolls back the ones before it and the server
      // skips the ones after; nothing is left open on the connection either way.
      const frame = this.live();
      let results: BatchResult[];
      try {
        results = await (frame ? runBatch(frame.client, statements) : this.sendBatch(this.lane() ?? (await this.laneReady()), statements));
      } catch (err) {
        const step = (err as { batchStep?: unknown }).batchStep;
        throw typeof step === 'number' ? new BatchStepError(step, err) : err;
      }
      ok = true;
      // A notification's step gives nothing (its statement's one row is pg_notify's void).
      if (notifies) for (let i = 0; i < steps.length; i++) if ('notify' in steps[i]!) results[i] = { rows: [], changes: 0 };
      return results;
    } finally {
      this.observer?.('tx', performance.now() - started, ok);
    }
  }

  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const frame: Frame = { client, inTx: false, savepoints: 0, done: false };
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        return await this.context.run(frame, fn);
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      }
    } finally {
      frame.done = true;
      client.release();
    }
  }

  async notify(channel: string, payload: string): Promise<void> {
    const notify = this.statement(NOTIFY_SQL);
    const query = { name: notify.name, text: notify.text, values: [toWire(channel), toWire(payload)] };
    const frame = this.live();
    if (frame) await frame.client.query(query);
    else await this.send(this.lane() ?? (await this.laneReady()), query);
  }

  async listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>> {
    let set = this.channels.get(channel);
    const first = !set;
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(handler);
    if (first) {
      const client = await this.listenerClient();
      await client.query(`LISTEN ${quoteIdent(channel)}`);
    }
    return async () => {
      set.delete(handler);
      if (set.size > 0 || this.channels.get(channel) !== set) return;
      this.channels.delete(channel);
      if (this.listener && !this.closed) await this.listener.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => undefined);
    };
  }

  observe(observer: QueryObserver | undefined): void {
    this.observer = observer;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
    const lanes = this.lanes.splice(0);
    await Promise.all(lanes.map((lane) => lane.client.end().catch(() => undefined)));
    await this.pool.end();
  }

  /** The open transaction (or pinned connection) of the caller's context, if it is still open. */
  private live(): Frame | undefined {
    const frame = this.context.current();
    return frame && !frame.done ? frame : undefined;
  }

  private target(): pg.Pool | pg.PoolClient {
    return this.live()?.client ?? this.pool;
  }

  private async query(kind: Parameters<QueryObserver>[0], sql: string, params: SqlParams | undefined, rowMode = false): Promise<pg.QueryResult> {
    const statement = this.statement(sql);
    const values = valuesOf(statement, params);
    const started = performance.now();
    let ok = false;
    try {
      const query: pg.QueryConfig = rowMode
        ? ({ name: statement.name, text: statement.text, values, rowMode: 'array' } as pg.QueryArrayConfig)
        : { name: statement.name, text: statement.text, values };
      const frame = this.live();
      const result = await (frame ? frame.client.query(query) : this.send(this.lane() ?? (await this.laneReady()), query));
      ok = true;
      return result;
    } finally {
      this.observer?.(kind, performance.now() - started, ok);
    }
  }

  /**
   * The lane for the next statement: the first whose oldest unanswered statement is recent (so
   * statements issued together share a write), else a new lane while fewer than `laneCount`
   * exist, else the one with the fewest unanswered.
   */
  private lane(): Lane | undefined {
    if (this.closed) throw new Error('the store is closed');
    const lane = this.pickLane();
    return lane.connected ? lane : undefined;
  }

  /** `lane()` when the lane it picks is still connecting: once connected. */
  private async laneReady(): Promise<Lane> {
    if (this.closed) throw new Error('the store is closed');
    const lane = this.pickLane();
    await lane.ready;
    return lane;
  }

  private pickLane(): Lane {
    const now = performance.now();
    let lane: Lane | undefined;
    for (const l of this.lanes) {
      if (l.pending.length === 0 || now - l.pending[0]! < LANE_STALL_MS) {
        lane = l;
        break;
      }
    }
    if (!lane && this.lanes.length < this.laneCount) lane = this.openLane();
    lane ??= this.lanes.reduce((a, b) => (b.pending.length < a.pending.length ? b : a));
    return lane;
  }

  private openLane(): Lane {
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 10_000,
      application_name: 'warden',
      pipeline: true,
      types: { getTypeParser: typeParser } as pg.CustomTypesConfig,
    } as pg.ClientConfig);
    const lane: Lane = { client, ready: undefined as unknown as Promise<pg.Client>, pending: [], connected: false, corked: false, broken: false };
    const drop = () => {
      lane.broken = true;
      const at = this.lanes.indexOf(lane);
      if (at >= 0) this.lanes.splice(at, 1);
    };
    // A lane the server dropped is replaced at the next statement; its unanswered statements fail.
    client.on('error', (err) => {
      log.warn({ err: err.message }, 'postgres: a shared connection failed; the next statement opens another');
      drop();
    });
    client.on('end', drop);
    lane.ready = client.connect().then(
      () => {
        lane.connected = true;
        return client;
      },
      (err: unknown) => {
        drop();
        throw err;
      },
    );
    // Callers see the failure through `lane()`; this only keeps it from being unhandled.
    lane.ready.catch(() => undefined);
    this.lanes.push(lane);
    return lane;
  }

  /**
   * Writes `query` on `lane`, corking the socket until the event loop's check phase so other
   * callers' statements of this turn of the loop join the write.
   */
  private send(lane: Lane, query: pg.QueryConfig): Promise<pg.QueryResult> {
    this.cork(lane);
    lane.pending.push(performance.now());
    const result = lane.client.query(query);
    result.then(
      () => void lane.pending.shift(),
      () => void lane.pending.shift(),
    );
    return result;
  }

  /** `send` for a batch: written in one piece (see `BatchQuery`). */
  private sendBatch(lane: Lane, statements: readonly WireStatement[]): Promise<BatchResult[]> {
    this.cork(lane);
    lane.pending.push(performance.now());
    return runBatch(lane.client, statements, () => void lane.pending.shift());
  }

  private cork(lane: Lane): void {
    if (lane.corked) return;
    const stream = (lane.client as unknown as { connection: { stream: { cork?: () => void; uncork?: () => void } } }).connection.stream;
    if (!stream.cork || !stream.uncork) return;
    lane.corked = true;
    stream.cork();
    setImmediate(() => {
      lane.corked = false;
      stream.uncork!();
    });
  }

  private async transaction<T>(frame: Frame, fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let ok = false;
    // BEGIN is not awaited: it goes out with the transaction's first statement (pipelined), one
    // round trip fewer. Its answer is checked before COMMIT; a BEGIN that failed means a broken
    // connection, on which the statements after it failed as well.
    const begun = frame.client.query('BEGIN');
    begun.catch(() => undefined);
    frame.inTx = true;
    try {
      const result = await fn();
      await begun;
      await frame.client.query('COMMIT');
      ok = true;
      return result;
    } catch (err) {
      await frame.client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      frame.inTx = false;
      this.observer?.('tx', performance.now() - started, ok);
    }
  }

  private async savepoint<T>(frame: Frame, fn: () => Promise<T>): Promise<T> {
    const name = `sp${++frame.savepoints}`;
    await frame.client.query(`SAVEPOINT ${name}`);
    try {
      const result = await fn();
      await frame.client.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (err) {
      await frame.client.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw err;
    } finally {
      frame.savepoints--;
    }
  }

  /**
   * `sql` as it goes on the wire, worked out once per text (one lookup per statement). A text's
   * name never changes once given (connections keep what they prepared under it), so a record
   * evicted from this cache gets the same name back.
   */
  private statement(sql: string): Statement {
    let s = this.statements.get(sql);
    if (s === undefined) {
      const rewritten = rewritePlaceholders(sql);
      let name = this.names.get(rewritten.text);
      if (name === undefined && this.names.size < NAMED_STATEMENTS) this.names.set(rewritten.text, (name = `w${this.names.size}`));
      s = { ...rewritten, name };
      if (this.statements.size >= REWRITE_CACHE) this.statements.delete(this.statements.keys().next().value as string);
      this.statements.set(sql, s);
    }
    return s;
  }

  private listenerClient(): Promise<pg.Client> {
    if (this.listener) return Promise.resolve(this.listener);
    this.listening ??= this.connectListener().finally(() => {
      this.listening = undefined;
    });
    return this.listening;
  }

  private async connectListener(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 10_000,
      application_name: 'warden-listen',
      // Without keepalive a listener behind a dropped link would wait forever for notifications.
      keepAlive: true,
    });
    client.on('notification', (msg) => {
      for (const handler of [...(this.channels.get(msg.channel) ?? [])]) {
        try {
          handler(msg.payload ?? '');
        } catch (err) {
          log.error({ err, channel: msg.channel }, 'postgres: a notification handler failed');
        }
      }
    });
    client.on('error', (err) => {
      log.warn({ err: err.message }, 'postgres: the notification connection failed; reconnecting');
      this.dropListener(client);
    });
    client.on('end', () => this.dropListener(client));
    await client.connect();
    this.listener = client;
    this.reconnectDelay = 250;
    return client;
  }

  private dropListener(client: pg.Client): void {
    if (this.listener !== client) return;
    this.listener = undefined;
    void client.end().catch(() => undefined);
    if (this.closed || this.channels.size === 0) return;
    this.reconnectTimer = setTimeout(() => background(this.relisten(), 'postgres: notifications not resumed'), this.reconnectDelay);
    this.reconnectTimer.unref();
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, 10_000);
  }

  private async relisten(): Promise<void> {
    if (this.closed) return;
    try {
      const client = await this.listenerClient();
      for (const channel of this.channels.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
      log.info({ channels: [...this.channels.keys()] }, 'postgres: notifications resumed');
      // Whatever was sent while the connection was down is gone: every listener looks again.
      for (const set of this.channels.values()) for (const handler of [...set]) handler(undefined);
    } catch (err) {
      log.warn({ err: (err as Error).message, retryInMs: this.reconnectDelay }, 'postgres: the notification connection is still down');
      this.reconnectTimer = setTimeout(() => background(this.relisten(), 'postgres: notifications not resumed'), this.reconnectDelay);
      this.reconnectTimer.unref();
      this.reconnectDelay = Math.min(this.reconnectDelay * 2, 10_000);
    }
  }
}

/** Sends `statements` as one batch (one Sync) on `client`; resolves to each statement's rows and count. `answered` is called first, either way. */
function runBatch(client: pg.ClientBase, statements: readonly WireStatement[], answered?: () => void): Promise<BatchResult[]> {
  return new Promise((resolve, reject) => {
    const query = new BatchQuery(statements, (err, results) => {
      answered?.();
      if (err) reject(err);
      else resolve(results!);
    });
    // A submittable query: pg answers through its callback (the call returns the query itself, no promise).
    (client as unknown as { query(q: BatchQuery): BatchQuery }).query(query);
  });
}

function typeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (oid === INT8_OID) return (value: string) => Number(value);
  return pg.types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown;
}

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * The values in `$n` order, as they go on the wire (made once, here: nothing is converted again
 * on the way out, and a value that cannot be sent fails before anything is written).
 */
function valuesOf(rewritten: Rewritten, params: SqlParams | undefined): WireValue[] {
  if (params === undefined) {
    if (rewritten.positional > 0 || rewritten.names) throw new Error('the statement has parameters but none were given');
    return [];
  }
  if (isNamed(params)) {
    const names = rewritten.names;
    if (!names) throw new Error('named parameters given to a statement without @names');
    const values: WireValue[] = new Array(names.length);
    for (let i = 0; i < names.length; i++) {
      const value = params[names[i]!];
      if (value === undefined && !(names[i]! in params)) throw new Error(`missing named parameter @${names[i]}`);
      values[i] = toWire(value);
    }
    return values;
  }
  const list = params as readonly SqlValue[];
  if (list.length !== rewritten.positional) throw new Error(`the statement has ${rewritten.positional} parameters, ${list.length} were given`);
  const values: WireValue[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) values[i] = toWire(list[i]);
  return values;
}

/**
 * A value as pg's own mapping sends it, for the types the store hands over (text, numbers,
 * bytes, NULL). PostgreSQL's text cannot hold U+0000, which SQLite stores: it is kept as U+FFFD
 * so a write never fails on a NUL a command or a tool's output carried.
 */
function toWire(value: SqlValue | undefined): WireValue {
  if (typeof value === 'string') return value.includes('\u0000') ? value.replace(/\u0000/g, '\uFFFD') : value;
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (value instanceof Uint8Array) return Buffer.isBuffer(value) ? value : Buffer.from(value);
  return JSON.stringify(value);
}
