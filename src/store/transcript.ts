import { scrubDeep, skipImages } from '../redact/scrub.js';
import type { BatchStep, Db } from './db.js';
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

export type TranscriptInput = Omit<TranscriptEntry, 'id' | 'createdAt' | 'isError'> & { isError?: boolean; createdAt?: number };

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

/** Sessions and their transcript entries. */
const INSERT = `INSERT INTO transcript_entries (session_key, role, tool, tool_call_id, content, details, is_error, created_at)
  VALUES (@sessionKey, @role, @tool, @toolCallId, @content, @details, @isError, @createdAt) RETURNING id`;
const TOUCH = `INSERT INTO sessions (key, agent_id, provider, created_at, updated_at) VALUES (@key, @agentId, @provider, @now, @now)
  ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at`;

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
   * the entries' ids in order.
   */
  async appendMany(session: { key: string; agentId: string; provider: string; now: number }, entries: readonly TranscriptInput[]): Promise<number[]> {
    const results = await this.db.batch([
      { sql: TOUCH, params: { key: session.key, agentId: session.agentId, provider: session.provider, now: session.now } },
      ...entries.flatMap((entry) => {
        const { params, content } = prepare(entry);
        // The entry's words go in the search index in the same transaction, keyed by the id the insert just took.
        const text = searchableText(entry.role, content);
        const insert: BatchStep = { sql: INSERT, params };
        return text === undefined ? [insert] : [insert, indexLastInsertStep(this.db.engine, entry.sessionKey, text)];
      }),
    ]);
    const ids: number[] = [];
    for (const r of results.slice(1)) if (r.rows[0]?.['id'] !== undefined) ids.push(Number(r.rows[0]['id']));
    return ids;
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
