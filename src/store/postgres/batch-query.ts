import pg from 'pg';
import type { BatchResult } from '../db.js';
import { encodeBatch, type WireMessage, type WireValue } from './batch-wire.js';

export type { WireValue } from './batch-wire.js';

/** One statement of a batch as it goes on the wire: named (prepared once per connection) or not. */
export interface WireStatement {
  name?: string | undefined;
  text: string;
  values: readonly WireValue[];
}

/** A statement's answer: its columns (RowDescription), each row (DataRow), its end (CommandComplete, with the row count). */
interface Columns {
  fields: ReadonlyArray<{ name: string; dataTypeID: number; format?: string }>;
}
interface DataRow {
  fields: ReadonlyArray<string | null>;
}
interface CommandComplete {
  text: string;
}

/** pg's protocol writer for one connection (not in pg's types). */
interface Connection {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  /** Writes a buffer of protocol messages (pg's own writes go through it). */
  _send(buffer: Buffer): boolean;
}

/** A prepared statement's columns as this client reads them: names and type parsers. */
interface Described {
  names: string[];
  parsers: Array<(value: string) => unknown>;
}

/**
 * The columns of each statement a connection has prepared, learnt from its first Describe. A
 * prepared statement's result columns cannot change while it exists (the server refuses to run it
 * once a schema change would alter them: "cached plan must not change result type"), so later
 * runs skip the Describe and the RowDescription it brings back.
 */
const described = new WeakMap<Connection, Map<string, Described>>();

/** The client's type parsers, as pg's client hands them to a query. */
interface TypeParsers {
  getTypeParser(oid: number, format: string): (value: string) => unknown;
}

/**
 * Several statements written as Parse/Bind/Describe/Execute each and ONE Sync at the end. The
 * server runs everything before a Sync as one implicit transaction: all of it commits at the
 * Sync, or — when a statement fails — that statement's error comes back, the server skips
 * every message up to the Sync and rolls back the statements before it. So a batch needs no
 * BEGIN/COMMIT of its own (inside an open transaction the Sync commits nothing; a failure aborts
 * that transaction, as a failed statement of it would).
 *
 * A pg Query to the client (a pipelined client takes no other kind; see the prototype link
 * below), without pg's per-query constructor work: the client hands every answer up to the
 * Sync's ReadyForQuery to the query it is answering, which here is the whole batch. Answers
 * arrive statement by statement; `current` follows them (a CommandComplete ends a statement), so
 * that the client's bookkeeping of prepared statements (which reads the query's `name` and
 * `text` at each ParseComplete) sees the statement being answered.
 */
export class BatchQuery {
  /** Called once, at the Sync's ReadyForQuery or at the first error (pg's client may also set it). */
  callback: ((err: Error | null) => void) | undefined;
  /** Where pg's client puts its type parsers before submitting. */
  readonly _result: { _types?: TypeParsers | undefined } = {};
  /** Set by a client in binary mode; results here are always text. */
  binary = false;
  /** A row that could not be read: the batch fails with it once the server is done answering. */
  private canceled: Error | false = false;
  private current = 0;
  /** Names this batch sent a Parse for: forgotten on failure unless the server parsed them. */
  private readonly parsing: string[] = [];
  /**
   * Each statement's rows and count, built here as the answers arrive (pg's own result objects,
   * made and copied per statement and per row, are not needed for a batch's plain rows).
   */
  private readonly results: BatchResult[] = [];
  private currentRows: Array<Record<string, unknown>> = [];
  private names: string[] = [];
  private parsers: Array<(value: string) => unknown> = [];
  /** Per statement: its columns as already known (no Describe sent), or undefined (described in this batch). */
  private known: Array<Described | undefined> = [];
  /** The connection's known columns, where this batch learns those of the statements it describes. */
  private learnt: Map<string, Described> | undefined;

  constructor(
    private readonly statements: readonly WireStatement[],
    done: (err: Error | null, results?: BatchResult[]) => void,
  ) {
    this.callback = (err) => (err ? done(err) : done(null, this.results));
  }

  /** The statement being answered, for the client's bookkeeping of prepared statements at each ParseComplete and error. */
  get name(): string | undefined {
    return this.statements[this.current]?.name;
  }
  get text(): string | undefined {
    return this.statements[this.current]?.text;
  }

  /** Writes the whole batch in one piece; nothing here can throw half-way (the values are already wire values). */
  submit(connection: Connection): Error | null {
    if (this.statements.length === 0) return new Error('an empty batch');
    let columns = described.get(connection);
    if (!columns) described.set(connection, (columns = new Map()));
    this.learnt = columns;
    // Names this batch parses, with their texts: recorded on the connection only once the whole
    // batch is known to go out (a batch refused half-way leaves no name taken as sent).
    const sent = new Map<string, string>();
    const messages: WireMessage[] = new Array(this.statements.length);
    this.known = new Array(this.statements.length);
    for (let i = 0; i < this.statements.length; i++) {
      const s = this.statements[i]!;
      const prepared = s.name !== undefined && connection.parsedStatements[s.name] !== undefined;
      const earlier = s.name === undefined ? undefined : (connection.parsedStatements[s.name] ?? connection.submittedNamedStatements[s.name] ?? sent.get(s.name));
      if (earlier !== undefined && earlier !== s.text) return new Error(`Prepared statements must be unique - '${s.name}' was used for a different statement`);
      if (earlier === undefined && s.name !== undefined) sent.set(s.name, s.text);
      // Only a statement the server has prepared has columns worth remembering.
      const cols = prepared ? columns.get(s.name!) : undefined;
      this.known[i] = cols;
      messages[i] = { name: s.name, text: s.text, values: s.values, parse: earlier === undefined, describe: cols === undefined };
    }
    for (const [name, text] of sent) {
      connection.submittedNamedStatements[name] = text;
      this.parsing.push(name);
    }
    this.use(this.known[0]);
    connection._send(encodeBatch(messages));
    return null;
  }

  handleRowDescription(msg: Columns): void {
    const types: TypeParsers = this._result._types ?? (pg.types as unknown as TypeParsers);
    const n = msg.fields.length;
    const names: string[] = new Array(n);
    const parsers: Array<(value: string) => unknown> = new Array(n);
    for (let i = 0; i < n; i++) {
      const field = msg.fields[i]!;
      names[i] = field.name;
      parsers[i] = types.getTypeParser(field.dataTypeID, (field.format ?? 'text') as 'text') as (value: string) => unknown;
    }
    this.names = names;
    this.parsers = parsers;
  }

  handleDataRow(msg: DataRow): void {
    if (this.canceled) return;
    const row: Record<string, unknown> = {};
    const values = msg.fields;
    try {
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        row[this.names[i]!] = value === null || value === undefined ? null : this.parsers[i]!(value);
      }
    } catch (err) {
      // As pg does: the batch fails with the parse error once the server is done answering.
      this.canceled = err as Error;
      return;
    }
    this.currentRows.push(row);
  }

  handleCommandComplete(msg: CommandComplete): void {
    this.results.push({ rows: this.currentRows, changes: rowCount(msg.text) });
    // A statement described here, now prepared and run: its columns (none where the server said
    // NoData) are known for its next run on this connection.
    const name = this.statements[this.current]!.name;
    if (name !== undefined && this.known[this.current] === undefined) this.learnt?.set(name, { names: this.names, parsers: this.parsers });
    this.currentRows = [];
    this.current++;
    this.use(this.known[this.current]);
  }

  /** A statement without text: no rows, nothing changed. */
  handleEmptyQuery(): void {
    this.handleCommandComplete({ text: '' });
  }

  handleReadyForQuery(connection: Connection): void {
    if (this.canceled) this.handleError(this.canceled, connection);
    else this.finish(null);
  }

  handleError(err: Error, connection: Connection): void {
    // The server skipped every message after the failed one: statements whose Parse it never
    // answered are not prepared on this connection, and must be parsed again next time.
    for (const name of this.parsing) if (connection.parsedStatements[name] === undefined) delete connection.submittedNamedStatements[name];
    const failure = this.canceled || err;
    this.canceled = false;
    Object.assign(failure, { batchStep: this.current });
    this.finish(failure);
  }

  /** The batch's one answer: pg calls the handlers above once each way, but a broken connection can fail a batch the server already answered. */
  private finish(err: Error | null): void {
    const callback = this.callback;
    this.callback = undefined;
    callback?.(err);
  }

  /** The columns the next rows are read with: known ones, or none until a RowDescription comes. */
  private use(columns: Described | undefined): void {
    this.names = columns?.names ?? [];
    this.parsers = columns?.parsers ?? [];
  }
}

// The client refuses any query that is not a pg Query in pipeline mode (a portal kept open across
// round trips would corrupt the pipeline); a batch keeps none open. Linked, not extended: pg's
// Query constructor (config copy, result objects, an event emitter) is work a batch never uses.
Object.setPrototypeOf(BatchQuery.prototype, pg.Query.prototype);

/** The row count a CommandComplete tag ends with ("INSERT 0 1", "SELECT 3", "DELETE 1"); 0 for tags without one. */
function rowCount(tag: string): number {
  const space = tag.lastIndexOf(' ');
  if (space < 0) return 0;
  const n = Number(tag.slice(space + 1));
  return Number.isInteger(n) ? n : 0;
}
