import pg from 'pg';
import type { BatchResult } from '../db.js';

/** A parameter as the protocol carries it: text, bytes, or NULL. */
export type WireValue = string | Buffer | null;

/** One statement of a batch as it goes on the wire: named (prepared once per connection) or not. */
export interface WireStatement {
  name?: string | undefined;
  text: string;
  values: readonly WireValue[];
}

/** pg's Query internals this module builds on (not in pg's types). */
interface QueryInternals {
  callback: ((err: Error | null, res?: unknown) => void) | undefined;
  _results: unknown;
  handleCommandComplete(msg: unknown, connection: Connection): void;
  handleError(err: Error, connection: Connection): void;
}

/** pg's protocol writer for one connection (not in pg's types). */
interface Connection {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  stream: { cork?: () => void; uncork?: () => void };
  parse(config: { text: string; name?: string | undefined }): void;
  bind(config: { statement?: string | undefined; values: readonly unknown[] }): void;
  describe(config: { type: 'P'; name: string }): void;
  execute(config: { portal: string }): void;
  sync(): void;
}

const QueryBase = pg.Query as unknown as new (config: { text: string }) => QueryInternals;

/**
 * Several statements written as Parse/Bind/Describe/Execute each and ONE Sync at the end. The
 * server runs everything before a Sync as one implicit transaction: all of it commits at the
 * Sync, or — when a statement fails — that statement's error comes back, the server skips
 * every message up to the Sync and rolls back the statements before it. So a batch needs no
 * BEGIN/COMMIT of its own (inside an open transaction the Sync commits nothing; a failure aborts
 * that transaction, as a failed statement of it would).
 *
 * Built on pg's Query so a pipelined client accepts it: the client hands every answer up to
 * the Sync's ReadyForQuery to the query it is answering, which here is the whole batch. Answers
 * arrive statement by statement; `current` follows them (a CommandComplete ends a statement), so
 * that the client's bookkeeping of prepared statements (which reads the query's `name` and
 * `text` at each ParseComplete) sees the statement being answered.
 */
export class BatchQuery extends QueryBase {
  private current = 0;
  /** Names this batch sent a Parse for: forgotten on failure unless the server parsed them. */
  private readonly parsing: string[] = [];

  constructor(
    private readonly statements: readonly WireStatement[],
    done: (err: Error | null, results?: BatchResult[]) => void,
  ) {
    super({ text: statements[0]?.text ?? '' });
    this.callback = (err, res) => {
      if (err) return done(err);
      // One statement's answer is a single result; several are a list, one per statement.
      const list = (Array.isArray(res) ? res : [res]) as Array<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>;
      const results: BatchResult[] = new Array(list.length);
      for (let i = 0; i < list.length; i++) results[i] = { rows: list[i]!.rows, changes: list[i]!.rowCount ?? 0 };
      done(null, results);
    };
  }

  // pg's Query constructor assigns these; here they are the statement being answered.
  get name(): string | undefined {
    return this.statements?.[this.current]?.name;
  }
  set name(_: string | undefined) {}
  get text(): string | undefined {
    return this.statements?.[this.current]?.text;
  }
  set text(_: string | undefined) {}

  /** Writes the whole batch in one piece; nothing here can throw half-way (the values are already wire values). */
  submit(connection: Connection): Error | null {
    if (this.statements.length === 0) return new Error('an empty batch');
    const sent = new Set<string>();
    connection.stream.cork?.();
    try {
      for (const s of this.statements) {
        const known = s.name !== undefined && (connection.parsedStatements[s.name] !== undefined || connection.submittedNamedStatements[s.name] !== undefined || sent.has(s.name));
        if (s.name !== undefined && known && (connection.parsedStatements[s.name] ?? connection.submittedNamedStatements[s.name] ?? s.text) !== s.text) {
          return new Error(`Prepared statements must be unique - '${s.name}' was used for a different statement`);
        }
        if (!known) {
          connection.parse({ text: s.text, name: s.name });
          if (s.name !== undefined) {
            connection.submittedNamedStatements[s.name] = s.text;
            sent.add(s.name);
            this.parsing.push(s.name);
          }
        }
        connection.bind({ statement: s.name, values: s.values });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '' });
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  override handleCommandComplete(msg: unknown, connection: Connection): void {
    super.handleCommandComplete(msg, connection);
    this.current++;
  }

  override handleError(err: Error, connection: Connection): void {
    // The server skipped every message after the failed one: statements whose Parse it never
    // answered are not prepared on this connection, and must be parsed again next time.
    for (const name of this.parsing) if (connection.parsedStatements[name] === undefined) delete connection.submittedNamedStatements[name];
    Object.assign(err, { batchStep: this.current });
    super.handleError(err, connection);
  }
}
