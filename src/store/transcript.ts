import { scrubDeep, skipImages } from '../redact/scrub.js';
import type { BatchStep, Db, SqlValue } from './db.js';
import { carryingBatch } from './ride-along.js';
import { indexEntry, indexLastInsertStep, searchableText } from './transcript-search.js';

export type TranscriptRole = 'user' | 'assistant' | 'tool' | 'system';

export interface TranscriptEntry {
  id: number;
  sessionKey: string;
  role: TranscriptRole;
  tool?: string | undefined;
  toolCallId?: string | undefined;
  /** Text or content blocks, as the model saw them. */
  content: unknown;
  /** Stored beside the entry for operators; never part of what the model sees. */
  details?: unknown;
  isError: boolean;
  createdAt: number;
}

export type TranscriptInput = Omit<TranscriptEntry, 'id' | 'createdAt' | 'isError'> & {
  isError?: boolean;
  createdAt?: number;
  /** Written over the session's entry with this id (its content and details, and its search text) instead of as a new entry. */
  rewrites?: number | undefined;
};

/** A condition (a boolean SQL expression with `?` parameters) a guarded write's statements carry in their WHERE. */
export interface WriteGuard {
  sql: string;
  params: SqlValue[];
}

interface Row {
  id: number;
  session_key: string;
  role: TranscriptRole;
  tool: string | null;
  tool_call_id: string | null;
  content: string;
  details: string | null;
  is_error: number;
  created_at: number;
}

/** The columns an entry is written with, and a session's activity time (its row made when new). */
const ENTRY_INTO = 'transcript_entries (session_key, role, tool, tool_call_id, content, details, is_error, created_at)';
const SESSION_INTO = 'sessions (key, agent_id, provider, created_at, updated_at)';
const TOUCHED = 'ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at';
const INSERT = `INSERT INTO ${ENTRY_INTO}
  VALUES (@sessionKey, @role, @tool, @toolCallId, @content, @details, @isError, @createdAt) RETURNING id`;
/** PostgreSQL: an entry with its search-index row (`transcript-search.ts`), one statement. */
const INSERT_INDEXED = `WITH e AS (${INSERT}),
  s AS (INSERT INTO transcript_search (entry_id, session_key, body) SELECT id, @sessionKey, @body FROM e)
  SELECT id FROM e`;
const TOUCH = `INSERT INTO ${SESSION_INTO} VALUES (@key, @agentId, @provider, @now, @now) ${TOUCHED}`;

/** Sessions and their transcript entries. */
export class Transcripts {
  constructor(private readonly db: Db) {}

  /** Creates the session row on first use and bumps its activity time after. */
  async ensureSession(key: string, agentId: string, provider: string, now = Date.now()): Promise<void> {
    await this.db.run(TOUCH, { key, agentId, provider, now });
  }

  /** Stores one entry and, in the same transaction, its words in the search index (`transcript-search.ts`). */
  async append(entry: TranscriptInput): Promise<number> {
    const { params, content } = prepare(entry);
    const text = searchableText(entry.role, content);
    const write = async () => {
      const row = await this.db.get<{ id: number }>(INSERT, params);
      const id = Number(row!.id);
      if (text !== undefined) await indexEntry(this.db, id, entry.sessionKey, text);
      return id;
    };
    return text === undefined ? write() : this.db.tx(write);
  }

  /**
   * A turn step's entries with their session's activity time, as one batch (on PostgreSQL one
   * round trip instead of BEGIN, a touch, an insert per entry and COMMIT, each awaited). Returns
   * the entries' ids in order. `touch: false` leaves the activity time as it is (written already
   * with the turn's message, see `DbTranscriptStore.append`). Writes waiting to ride with the
   * session's next write (`ride-along.ts`: the usage record of the call that gave these entries)
   * commit in the same transaction.
   */
  async appendMany(session: { key: string; agentId: string; provider: string; now: number }, entries: readonly TranscriptInput[], options: { touch?: boolean } = {}): Promise<number[]> {
    const touch = options.touch !== false;
    const results = await carryingBatch(this.db, session.key, [
      ...(touch ? [{ sql: TOUCH, params: { key: session.key, agentId: session.agentId, provider: session.provider, now: session.now } }] : []),
      ...entries.flatMap((entry) => {
        const { params, content } = prepare(entry);
        // The entry's words go in the search index in the same transaction, keyed by the id the insert just took.
        const text = searchableText(entry.role, content);
        if (entry.rewrites !== undefined) return rewriteSteps(this.db, entry.rewrites, params, text);
        if (text === undefined) return [{ sql: INSERT, params }];
        // PostgreSQL: the entry and its index row in one statement (one execution, no sequence
        // lookup for the id); SQLite: the index row keyed by the insert's rowid, right after it.
        return this.db.engine === 'postgres' ? [{ sql: INSERT_INDEXED, params: { ...params, body: text } }] : [{ sql: INSERT, params }, indexLastInsertStep(this.db.engine, entry.sessionKey, text)];
      }),
    ]);
    const ids: number[] = [];
    for (const r of results.slice(touch ? 1 : 0)) if (r.rows[0]?.['id'] !== undefined) ids.push(Number(r.rows[0]['id']));
    return ids;
  }

  /**
   * One entry with its session's activity time and its search text, as steps of another
   * write that run only where `guard` holds (the place that takes the session's lease): nothing
   * is written otherwise. The first step's first row carries the entry's id when it was written.
   */
  guardedAppendSteps(session: { key: string; agentId: string; provider: string; now: number }, entry: TranscriptInput, guard: WriteGuard): BatchStep[] {
    const { params, content } = prepare(entry);
    const text = searchableText(entry.role, content);
    const values: SqlValue[] = [params['sessionKey']!, params['role']!, params['tool']!, params['toolCallId']!, params['content']!, params['details']!, params['isError']!, params['createdAt']!];
    const touch: SqlValue[] = [session.key, session.agentId, session.provider, session.now, session.now];
    if (this.db.engine === 'postgres') {
      // One statement: the entry (only where the guard holds), its index row and the session's touch from it.
      return [
        {
          sql: `WITH e AS (INSERT INTO ${ENTRY_INTO}
              SELECT ?, ?, ?, ?, ?, ?, ?::integer, ?::bigint WHERE ${guard.sql} RETURNING id)${
                text === undefined ? '' : `,
  s AS (INSERT INTO transcript_search (entry_id, session_key, body) SELECT id, ?, ? FROM e)`
              },
  t AS (INSERT INTO ${SESSION_INTO} SELECT ?, ?, ?, ?::bigint, ?::bigint FROM e ${TOUCHED})
  SELECT id FROM e`,
          params: [...values, ...guard.params, ...(text === undefined ? [] : [entry.sessionKey, text]), ...touch],
        },
      ];
    }
    return [
      { sql: `INSERT INTO ${ENTRY_INTO} SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE ${guard.sql} RETURNING id`, params: [...values, ...guard.params] },
      // Right after the insert: `changes()` is its row count, `last_insert_rowid()` its id.
      ...(text === undefined ? [] : [{ sql: 'INSERT INTO transcript_search (rowid, body, session_key) SELECT last_insert_rowid(), ?, ? WHERE changes() > 0', params: [text, entry.sessionKey] }]),
      {
        sql: `INSERT INTO ${SESSION_INTO} SELECT ?, ?, ?, ?, ? WHERE ${guard.sql} ${TOUCHED}`,
        params: [...touch, ...guard.params],
      },
    ];
  }

  async list(sessionKey: string, limit = 1000): Promise<TranscriptEntry[]> {
    const rows = await this.db.all<Row>('SELECT * FROM (SELECT * FROM transcript_entries WHERE session_key = ? ORDER BY id DESC LIMIT ?) AS newest ORDER BY id', [sessionKey, limit]);
    return rows.map((r) => ({
      id: r.id,
      sessionKey: r.session_key,
      role: r.role,
      tool: r.tool ?? undefined,
      toolCallId: r.tool_call_id ?? undefined,
      content: JSON.parse(r.content) as unknown,
      details: r.details === null ? undefined : (JSON.parse(r.details) as unknown),
      isError: r.is_error === 1,
      createdAt: r.created_at,
    }));
  }
}

/**
 * An entry written over an earlier one of its session (the same id, so its place in the
 * transcript stays): its content and details, and its search text. The first step's first row
 * carries the id when the entry was there.
 */
function rewriteSteps(db: Db, id: number, params: Record<string, string | number | null>, text: string | undefined): BatchStep[] {
  const values = { id, sessionKey: params['sessionKey']!, content: params['content']!, details: params['details']!, body: text ?? '' };
  if (db.engine === 'postgres') {
    return [
      {
        sql: `WITH e AS (UPDATE transcript_entries SET content = @content, details = @details WHERE id = @id AND session_key = @sessionKey RETURNING id),
  s AS (${
          text === undefined
            ? 'DELETE FROM transcript_search WHERE entry_id IN (SELECT id FROM e)'
            : 'INSERT INTO transcript_search (entry_id, session_key, body) SELECT id, @sessionKey, @body FROM e ON CONFLICT (entry_id) DO UPDATE SET body = excluded.body'
        })
  SELECT id FROM e`,
        params: text === undefined ? { id, sessionKey: values.sessionKey, content: values.content, details: values.details } : values,
      },
    ];
  }
  return [
    { sql: 'UPDATE transcript_entries SET content = ?, details = ? WHERE id = ? AND session_key = ? RETURNING id', params: [values.content, values.details, id, values.sessionKey] },
    { sql: 'DELETE FROM transcript_search WHERE rowid = ? AND changes() > 0', params: [id] },
    ...(text === undefined ? [] : [{ sql: 'INSERT INTO transcript_search (rowid, body, session_key) SELECT id, ?, session_key FROM transcript_entries WHERE id = ? AND session_key = ?', params: [text, id, values.sessionKey] }]),
  ];
}

/** An entry as the insert's parameters, and its content as stored (what the search index reads). */
function prepare(entry: TranscriptInput): { params: Record<string, string | number | null>; content: unknown } {
  // Whatever reached here, a known secret or a credential shape is never stored (nor indexed).
  const content = scrubDeep(entry.content, { skip: skipImages });
  return {
    content,
    params: {
      sessionKey: entry.sessionKey,
      role: entry.role,
      tool: entry.tool ?? null,
      toolCallId: entry.toolCallId ?? null,
      content: JSON.stringify(content),
      details: entry.details === undefined ? null : JSON.stringify(scrubDeep(entry.details, { skip: skipImages })),
      isError: entry.isError ? 1 : 0,
      createdAt: entry.createdAt ?? Date.now(),
    },
  };
}
