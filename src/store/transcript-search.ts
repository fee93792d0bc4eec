import type { BatchStep, Db, SqlValue, StoreEngine } from './db.js';
import type { FeatureMigrations, Migration } from './migrations.js';

/**
 * The full-text index over transcripts (`sessions_search`): SQLite FTS5 or a PostgreSQL tsvector,
 * one row per transcript entry that carries words people or the agent said (user and assistant
 * messages, compaction summaries). Tool results are not indexed: they are data a tool fetched,
 * not what was said, and can be large.
 *
 * The index is written in the same transaction as the entry (`Transcripts.append`), from the
 * content already scrubbed of secrets, and backfilled by the migration that creates it.
 *
 * A query is never handed to the engine's query language: it is cut into words here (letters and
 * digits only) and each engine gets only those words, ANDed — FTS5 as quoted phrases, PostgreSQL
 * through `plainto_tsquery`, which has no operators. Quotes, NEAR, column filters, `*`, `-`, `:`
 * and parentheses in a query are separators, nothing more.
 */

/** The longest query accepted, in characters; longer is an error, not a silent cut. */
export const MAX_QUERY_CHARS = 500;
/** Words of a query beyond this are an error: each is a term the engine must intersect. */
export const MAX_QUERY_TERMS = 12;
/** A word longer than this matches nothing a person typed; it is refused. */
export const MAX_TERM_CHARS = 64;
/** How much of one entry's text is indexed (the rest of a huge message is not searchable). */
export const MAX_INDEXED_CHARS = 20_000;

export type TermsResult = { ok: true; terms: string[] } | { ok: false; message: string };

const isWordChar = (ch: string): boolean => /[\p{L}\p{N}]/u.test(ch);

/**
 * The words of a query, lower-cased and de-duplicated, in order: runs of letters and digits
 * (a linear scan; everything else separates words). Errors name the limit a query broke.
 */
export function queryTerms(query: string): TermsResult {
  if (query.length > MAX_QUERY_CHARS) return { ok: false, message: `query: at most ${MAX_QUERY_CHARS} characters (got ${query.length})` };
  const terms: string[] = [];
  let word = '';
  const flush = () => {
    if (word === '') return;
    const term = word.toLowerCase();
    word = '';
    if (!terms.includes(term)) terms.push(term);
  };
  for (const ch of query) {
    if (isWordChar(ch)) word += ch;
    else flush();
  }
  flush();
  if (terms.length === 0) return { ok: false, message: 'query: no words to search for (letters or digits)' };
  if (terms.length > MAX_QUERY_TERMS) return { ok: false, message: `query: at most ${MAX_QUERY_TERMS} distinct words (got ${terms.length})` };
  const long = terms.find((t) => t.length > MAX_TERM_CHARS);
  if (long !== undefined) return { ok: false, message: `query: a word longer than ${MAX_TERM_CHARS} characters ("${long.slice(0, 16)}…")` };
  return { ok: true, terms };
}

/** FTS5's MATCH text for `terms`: each word a quoted phrase (words hold no quote), ANDed. */
export const fts5Match = (terms: readonly string[]): string => terms.map((t) => `"${t}"`).join(' ');

/**
 * The searchable text of one stored entry (its content as stored, already scrubbed): the text
 * parts of a user or assistant message, a summary's text; undefined for anything else.
 */
export function searchableText(role: string, content: unknown): string | undefined {
  let text: string | undefined;
  if (role === 'user' || role === 'assistant') {
    if (typeof content === 'string') text = content;
    else if (Array.isArray(content)) {
      text = content
        .flatMap((p) => (typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'text' && typeof (p as { text?: unknown }).text === 'string' ? [(p as { text: string }).text] : []))
        .join('\n');
    }
  } else if (role === 'system' && typeof content === 'object' && content !== null && (content as { type?: unknown }).type === 'summary') {
    const t = (content as { text?: unknown }).text;
    if (typeof t === 'string') text = t;
  }
  if (text === undefined || text.trim() === '') return undefined;
  return text.length > MAX_INDEXED_CHARS ? text.slice(0, MAX_INDEXED_CHARS) : text;
}

/** Adds one entry to the index (inside the caller's transaction). */
export async function indexEntry(db: Db, entryId: number, sessionKey: string, text: string): Promise<void> {
  if (db.engine === 'sqlite') await db.run('INSERT INTO transcript_search (rowid, body, session_key) VALUES (?, ?, ?)', [entryId, text, sessionKey]);
  else await db.run('INSERT INTO transcript_search (entry_id, session_key, body) VALUES (?, ?, ?) ON CONFLICT (entry_id) DO NOTHING', [entryId, sessionKey, text]);
}

/**
 * `indexEntry` as a batch step right after the entry's insert, keyed by the id that insert took
 * (the same connection and transaction: `last_insert_rowid()` / the identity's `currval`), so a
 * turn step's entries and their index rows go out in one round trip.
 */
export function indexLastInsertStep(engine: StoreEngine, sessionKey: string, text: string): BatchStep {
  return engine === 'sqlite'
    ? { sql: 'INSERT INTO transcript_search (rowid, body, session_key) VALUES (last_insert_rowid(), ?, ?)', params: [text, sessionKey] }
    : { sql: "INSERT INTO transcript_search (entry_id, session_key, body) VALUES (currval(pg_get_serial_sequence('transcript_entries', 'id')), ?, ?)", params: [sessionKey, text] };
}

export interface SearchHit {
  entryId: number;
  sessionKey: string;
  role: string;
  body: string;
  createdAt: number;
}

/**
 * One page of entries matching every term, best first (bm25 / ts_rank_cd, then newest), among
 * the sessions named in `sessionKeys` only: the caller decides visibility before asking, and
 * nothing outside that list is ever read.
 */
export async function searchIndex(db: Db, options: { sessionKeys: readonly string[]; terms: readonly string[]; limit: number; offset: number }): Promise<SearchHit[]> {
  if (options.sessionKeys.length === 0 || options.terms.length === 0) return [];
  const keys = options.sessionKeys.map(() => '?').join(', ');
  const page = [options.limit, options.offset];
  if (db.engine === 'sqlite') {
    return db.all<SearchHit>(
      `SELECT transcript_search.rowid AS "entryId", transcript_search.session_key AS "sessionKey", e.role AS role, transcript_search.body AS body, e.created_at AS "createdAt"
       FROM transcript_search JOIN transcript_entries e ON e.id = transcript_search.rowid
       WHERE transcript_search MATCH ? AND transcript_search.session_key IN (${keys})
       ORDER BY bm25(transcript_search), transcript_search.rowid DESC LIMIT ? OFFSET ?`,
      [fts5Match(options.terms), ...options.sessionKeys, ...page] as SqlValue[],
    );
  }
  const rows = await db.all<SearchHit>(
    `SELECT s.entry_id AS "entryId", s.session_key AS "sessionKey", e.role AS role, s.body AS body, e.created_at AS "createdAt"
     FROM transcript_search s JOIN transcript_entries e ON e.id = s.entry_id, plainto_tsquery('simple', ?) q
     WHERE s.tsv @@ q AND s.session_key IN (${keys})
     ORDER BY ts_rank_cd(s.tsv, q) DESC, s.entry_id DESC LIMIT ? OFFSET ?`,
    [options.terms.join(' '), ...options.sessionKeys, ...page] as SqlValue[],
  );
  return rows.map((r) => ({ ...r, entryId: Number(r.entryId), createdAt: Number(r.createdAt) }));
}

/** Indexes every stored entry not indexed yet, a batch at a time (the migration's backfill). */
async function backfill(db: Db): Promise<void> {
  const BATCH = 500;
  for (let after = 0; ; ) {
    const rows = await db.all<{ id: number; session_key: string; role: string; content: string }>(
      `SELECT id, session_key, role, content FROM transcript_entries WHERE id > ? AND role IN ('user', 'assistant', 'system') ORDER BY id LIMIT ?`,
      [after, BATCH],
    );
    if (rows.length === 0) return;
    for (const row of rows) {
      let content: unknown;
      try {
        content = JSON.parse(row.content) as unknown;
      } catch {
        content = undefined; // a row that is no JSON has no text to index
      }
      const text = searchableText(row.role, content);
      if (text !== undefined) await indexEntry(db, Number(row.id), row.session_key, text);
    }
    after = Number(rows.at(-1)!.id);
  }
}

const sqlite001: Migration = {
  id: 'transcript-search-001-fts5',
  async up(db) {
    // unicode61 folds case and diacritics; session_key is stored, never tokenized.
    await db.exec(`CREATE VIRTUAL TABLE transcript_search USING fts5(body, session_key UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')`);
    await backfill(db);
  },
};

const postgres001: Migration = {
  id: 'transcript-search-pg-001-tsvector',
  async up(db) {
    // 'simple': no stemming and no stop words, the same words FTS5 finds (and no language guess).
    await db.exec(`
      CREATE TABLE transcript_search (
        entry_id     BIGINT PRIMARY KEY REFERENCES transcript_entries (id) ON DELETE CASCADE,
        session_key  TEXT NOT NULL,
        body         TEXT NOT NULL,
        tsv          tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED
      );
      CREATE INDEX transcript_search_tsv ON transcript_search USING GIN (tsv);
      CREATE INDEX transcript_search_by_session ON transcript_search (session_key);
    `);
    await backfill(db);
  },
};

/**
 * The index row's foreign key to its entry goes: its check (a trigger locking the entry's row)
 * took about as long as the entry's insert itself, on every message and every reply, and it
 * guarded nothing written since — an index row is only ever written with its entry, in the same
 * statement (`Transcripts.appendMany`) or transaction, and entries are never deleted. (SQLite's
 * FTS5 index never had one.) Whatever deletes entries one day deletes their index rows with them.
 */
const postgres002: Migration = {
  id: 'transcript-search-pg-002-no-entry-key',
  async up(db) {
    await db.exec('ALTER TABLE transcript_search DROP CONSTRAINT IF EXISTS transcript_search_entry_id_fkey');
  },
};

export const transcriptSearchMigrations: FeatureMigrations = { feature: 'transcript-search', sqlite: [sqlite001], postgres: [postgres001, postgres002] };
