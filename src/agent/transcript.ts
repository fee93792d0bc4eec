import type { BatchResult, BatchStep, Db, StoreEngine } from '../store/db.js';
import type { Message } from '../models/types.js';
import { Transcripts, type TranscriptInput } from '../store/index.js';
import type { WriteGuard } from '../store/transcript.js';
import { searchIndex } from '../store/transcript-search.js';
import type { TranscriptAppend, TranscriptEntry, TranscriptSearchHit, TranscriptStore } from './types.js';

interface Row {
  id: number;
  role: 'user' | 'assistant' | 'tool' | 'system';
  tool: string | null;
  tool_call_id: string | null;
  content: string;
  details: string | null;
  is_error: number;
  created_at: number;
}

/** What a user row keeps beside its content: whose message it is. */
interface UserDetails {
  sender: { id: string; name?: string };
}

/** A compaction summary as stored in a `system` row. */
interface SummaryContent {
  type: 'summary';
  text: string;
  coversThroughSeq: number;
}

export const SUMMARY_PREFIX = '[Summary of the earlier conversation]';
export const NOTICE_PREFIX = '[Notice from Warden]';

/** The user-side message a summary becomes in what the model sees. */
export const summaryMessage = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text: `${SUMMARY_PREFIX}\n${text}` }] });

// Other system rows (an approval's notice) are for operators: only a summary covers entries. A
// summary's content is always written as `{"type":"summary",…}` (below), so its prefix names it
// on both engines without parsing JSON in SQL.
const SUMMARY_LIKE = `content LIKE '{"type":"summary"%'`;

/** Sessions whose last write is remembered for `loadSteps`' freshness. */
const WRITTEN_SESSIONS = 10_000;

/**
 * Appends made in this process through any transcript store, counted, and each session's latest
 * (see `loadSteps`): one count for the process, since several stores write the same sessions
 * (the turn's, the deferred calls').
 */
const written = { count: 0, forgotten: 0, sessions: new Map<string, number>() };

/** When `sessionKey` was last written here (sessions no longer remembered count as written at `forgotten`). */
const writtenAt = (sessionKey: string): number => written.sessions.get(sessionKey) ?? written.forgotten;

function wrote(sessionKey: string): void {
  // Bounded: past the bound every session counts as written now (reads taken before are read again).
  if (written.sessions.size >= WRITTEN_SESSIONS) {
    written.sessions.clear();
    written.forgotten = written.count + 1;
  }
  written.sessions.set(sessionKey, ++written.count);
}

/** The columns an entry is read with (its session's key is the one asked for). */
const COLUMNS = 'id, role, tool, tool_call_id, content, details, is_error, created_at';

/**
 * A transcript's read, as one statement: its latest summary, and the entries after the latest
 * summary's row, in id order (the summary, when there is one, first: every entry read with it
 * comes after it). The summary is found through the summaries' own index (`core-migrations.ts`)
 * and the entries after it as a range of the session's index — on PostgreSQL through the
 * `(session_key, id)` row comparison — so the read costs the session's recent entries, not the
 * whole table: with `id > …` alone, PostgreSQL's plan walked the primary key over every
 * session's entries after that id. One statement rather than two: the summary and the entries
 * after it come from one snapshot, and the read is one execution less.
 */
const READ = {
  // SQLite's planner takes `id > …` as the range of the session's index already (and the row
  // comparison only as its first column).
  sqlite: `WITH s AS (SELECT ${COLUMNS} FROM transcript_entries WHERE session_key = ? AND role = 'system' AND ${SUMMARY_LIKE} ORDER BY id DESC LIMIT 1)
  SELECT * FROM s UNION ALL
  SELECT ${COLUMNS} FROM transcript_entries WHERE session_key = ? AND (role != 'system' OR NOT ${SUMMARY_LIKE}) AND id > COALESCE((SELECT id FROM s), 0)
  ORDER BY id`,
  postgres: `WITH s AS (SELECT ${COLUMNS} FROM transcript_entries WHERE session_key = ? AND role = 'system' AND ${SUMMARY_LIKE} ORDER BY id DESC LIMIT 1)
  SELECT * FROM s UNION ALL
  SELECT ${COLUMNS} FROM transcript_entries WHERE session_key = ? AND (role != 'system' OR NOT ${SUMMARY_LIKE})
    AND (session_key, id) > (?, COALESCE((SELECT id FROM s), 0))
  ORDER BY id`,
} as const;

function readStep(engine: StoreEngine, sessionKey: string): { sql: string; params: string[] } {
  return engine === 'postgres' ? { sql: READ.postgres, params: [sessionKey, sessionKey, sessionKey] } : { sql: READ.sqlite, params: [sessionKey, sessionKey] };
}

/** The read's rows as the latest summary's row (first, when there is one) and the entries after it. */
function splitRead(rows: readonly Row[]): { summaryRow: Row | undefined; after: readonly Row[] } {
  const first = rows[0];
  // Only the summary's row is a summary among them: the entries after it leave summaries out.
  return first !== undefined && first.role === 'system' && first.content.startsWith('{"type":"summary"') ? { summaryRow: first, after: rows.slice(1) } : { summaryRow: undefined, after: rows };
}

/**
 * The agent's transcript on the store's `transcript_entries` table: user and assistant
 * messages as their content parts, tool results as `tool` rows, compaction summaries as
 * `system` rows that say which entries they cover.
 */
export class DbTranscriptStore implements TranscriptStore {
  private readonly transcripts: Transcripts;
  constructor(private readonly db: Db) {
    this.transcripts = new Transcripts(db);
  }

  async load(sessionKey: string): Promise<TranscriptEntry[]> {
    const read = readStep(this.db.engine, sessionKey);
    const { summaryRow, after } = splitRead(await this.db.all<Row>(read.sql, read.params));
    return this.finish(sessionKey, summaryRow, after);
  }

  /**
   * `load` as batch steps another write carries (the session lease's place): the same reads, the
   * same result. `fresh()` turns false once the session was written in this process after the read (a turn
   * that ran in between, a deferred call's outcome): what was read is then out of date.
   */
  loadSteps(sessionKey: string): { steps: readonly BatchStep[]; read(results: readonly BatchResult[]): Promise<{ entries: TranscriptEntry[]; fresh(): boolean }> } {
    const at = written.count;
    return {
      steps: [readStep(this.db.engine, sessionKey)],
      read: async (results) => {
        const { summaryRow, after } = splitRead((results[0]?.rows ?? []) as unknown as Row[]);
        const entries = await this.finish(sessionKey, summaryRow, after);
        return { entries, fresh: () => writtenAt(sessionKey) <= at };
      },
    };
  }

  /**
   * The two reads' rows as what the model should see. A summary covers entries through its
   * `coversThroughSeq`, below its own row: the entries in between are read after, only when
   * there is a summary.
   */
  private async finish(sessionKey: string, summaryRow: Row | undefined, after: readonly Row[]): Promise<TranscriptEntry[]> {
    const summary = summaryRow ? toEntry(summaryRow) : undefined;
    let rows = after;
    if (summary?.coversThroughSeq !== undefined) {
      // Up to the first entry already read (not the summary's row), so the two reads meet exactly
      // even if a later summary was written between them.
      const upTo = after[0]?.id ?? Number.MAX_SAFE_INTEGER;
      if (summary.coversThroughSeq + 1 < upTo) {
        const between = await this.db.all<Row>(`SELECT ${COLUMNS} FROM transcript_entries WHERE session_key = ? AND id > ? AND id < ? AND (role != 'system' OR NOT ${SUMMARY_LIKE}) ORDER BY id`, [
          sessionKey,
          summary.coversThroughSeq,
          upTo,
        ]);
        rows = [...between, ...after];
      }
    }
    // Summaries come first on their own; other system rows (notices) stay in place.
    const entries: TranscriptEntry[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) entries[i] = toEntry(rows[i]!);
    const kept = latestResultPerCall(entries);
    if (summary) kept.unshift(summary);
    return kept;
  }

  async append(sessionKey: string, entries: TranscriptAppend[], options: { touch?: boolean } = {}): Promise<TranscriptEntry[]> {
    const session = sessionOf(sessionKey);
    const inputs = entries.map((entry) => toInput(sessionKey, entry, session.now));
    // One batch: the session's activity time (unless `touch: false`) and every entry, all or
    // none. Counted as a write before it is sent: a read taken meanwhile may not have seen it.
    wrote(sessionKey);
    const seqs = await this.transcripts.appendMany(session, inputs, options);
    return entries.map(({ rewrites: _, ...entry }, i) => ({ ...entry, seq: seqs[i]!, createdAt: session.now }));
  }

  /**
   * One entry (the turn's incoming message) as steps another write carries under its `guard`
   * (the place that takes the session's lease, see `TurnStartRead.write`): written only where
   * the guard holds. Counted as a write now, before any read taken with it: a read taken
   * earlier may not have seen it. `seq` finds the entry's seq in the steps' results (undefined
   * when the guard did not hold).
   */
  guardedAppend(sessionKey: string, entry: TranscriptAppend): { steps(guard: WriteGuard): BatchStep[]; seq(results: readonly BatchResult[]): number | undefined } {
    const session = sessionOf(sessionKey);
    const input = toInput(sessionKey, entry, session.now);
    wrote(sessionKey);
    return {
      steps: (guard) => this.transcripts.guardedAppendSteps(session, input, guard),
      seq: (results) => {
        const id = results[0]?.rows[0]?.['id'];
        return id === undefined || id === null ? undefined : Number(id);
      },
    };
  }

  async history(sessionKey: string, options: { limit: number; beforeSeq?: number | undefined }): Promise<TranscriptEntry[]> {
    const rows = await this.db.all<Row>('SELECT * FROM transcript_entries WHERE session_key = ? AND id < ? ORDER BY id DESC LIMIT ?', [
      sessionKey,
      options.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      options.limit,
    ]);
    return rows.reverse().map(toEntry);
  }

  async search(options: { sessionKeys: readonly string[]; terms: readonly string[]; limit: number; offset: number }): Promise<TranscriptSearchHit[]> {
    const hits = await searchIndex(this.db, options);
    return hits.map((h) => ({ seq: h.entryId, sessionKey: h.sessionKey, role: h.role, text: h.body, createdAt: h.createdAt }));
  }

  sessions(): Promise<Array<{ sessionKey: string; entries: number; updatedAt: number }>> {
    return this.db.all(
      `SELECT s.key AS "sessionKey", s.updated_at AS "updatedAt", (SELECT COUNT(*) FROM transcript_entries t WHERE t.session_key = s.key AND t.role != 'system') AS entries
       FROM sessions s ORDER BY s.updated_at DESC`,
    );
  }
}

/** The session row's fields, from the key (`agent:<id>:<provider>:…`), and the time of a write. */
function sessionOf(sessionKey: string): { key: string; agentId: string; provider: string; now: number } {
  const [, agentId = 'main', provider = 'unknown'] = sessionKey.split(':');
  return { key: sessionKey, agentId, provider, now: Date.now() };
}

/** A transcript entry as the store's row: messages as their content parts, tool results as `tool` rows, summaries as `system` rows. */
function toInput(sessionKey: string, entry: TranscriptAppend, now: number): TranscriptInput {
  const { message } = entry;
  if (entry.kind === 'summary') {
    const text = message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
    const content: SummaryContent = {
      type: 'summary',
      text: text.startsWith(SUMMARY_PREFIX) ? text.slice(SUMMARY_PREFIX.length + 1) : text,
      coversThroughSeq: entry.coversThroughSeq ?? 0,
    };
    return { sessionKey, role: 'system', content, createdAt: now };
  }
  if (message.role === 'toolResult') {
    return { sessionKey, role: 'tool', tool: message.toolName, toolCallId: message.toolCallId, content: message.content, isError: message.isError, createdAt: now };
  }
  const details: UserDetails | undefined =
    message.role === 'user' && entry.sender ? { sender: { id: entry.sender.id, ...(entry.sender.name !== undefined ? { name: entry.sender.name } : {}) } } : undefined;
  return { sessionKey, role: message.role, content: message.content, details, createdAt: now, ...(entry.rewrites !== undefined ? { rewrites: entry.rewrites } : {}) };
}

/**
 * The call path may persist a tool result itself (with its details) before the loop stores
 * the result the model actually read (capped, wrapped, in call order). Within each run of
 * results after an assistant message only the last row per call id counts; ids may repeat
 * across rounds on servers that do not send them, so the rule never looks past one run.
 */
export function latestResultPerCall(entries: TranscriptEntry[]): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  let run: TranscriptEntry[] = [];
  const flush = () => {
    const last = new Map<string, number>();
    run.forEach((e, i) => last.set((e.message as { toolCallId: string }).toolCallId, i));
    out.push(...run.filter((e, i) => last.get((e.message as { toolCallId: string }).toolCallId) === i));
    run = [];
  };
  for (const entry of entries) {
    if (entry.message.role === 'toolResult') run.push(entry);
    else {
      flush();
      out.push(entry);
    }
  }
  flush();
  return out;
}

const isSummary = (content: unknown): content is SummaryContent =>
  typeof content === 'object' && content !== null && (content as { type?: unknown }).type === 'summary';

function toEntry(row: Row): TranscriptEntry {
  const content = JSON.parse(row.content) as unknown;
  if (row.role === 'system') {
    if (isSummary(content)) return { seq: row.id, createdAt: row.created_at, kind: 'summary', coversThroughSeq: content.coversThroughSeq, message: summaryMessage(content.text) };
    // A notice Warden wrote into the session (an approval interrupted by a restart): the model reads it as such.
    const text = typeof content === 'string' ? content : JSON.stringify(content);
    return { seq: row.id, createdAt: row.created_at, kind: 'message', message: { role: 'user', content: [{ type: 'text', text: `${NOTICE_PREFIX} ${text}` }] } };
  }
  if (row.role === 'tool') {
    return {
      seq: row.id,
      createdAt: row.created_at,
      kind: 'message',
      message: {
        role: 'toolResult',
        toolCallId: row.tool_call_id ?? '',
        toolName: row.tool ?? '',
        content: content as Extract<Message, { role: 'toolResult' }>['content'],
        isError: row.is_error === 1,
      },
    };
  }
  const message = { role: row.role, content } as Message;
  const sender = row.role === 'user' ? senderOf(row.details) : undefined;
  return sender ? { seq: row.id, createdAt: row.created_at, kind: 'message', message, sender } : { seq: row.id, createdAt: row.created_at, kind: 'message', message };
}

function senderOf(details: string | null): TranscriptEntry['sender'] {
  if (details === null) return undefined;
  const parsed = JSON.parse(details) as Partial<UserDetails> | null;
  const sender = parsed?.sender;
  if (typeof sender?.id !== 'string') return undefined;
  return { id: sender.id, ...(typeof sender.name === 'string' ? { name: sender.name } : {}) };
}
