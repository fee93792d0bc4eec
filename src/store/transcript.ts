import { scrubDeep, skipImages } from '../redact/scrub.js';
import type { Db } from './db.js';

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

  async append(entry: TranscriptInput): Promise<number> {
    const row = await this.db.get<{ id: number }>(INSERT, insertParams(entry));
    return Number(row!.id);
  }

  /**
   * A turn step's entries with their session's activity time, as one batch (on PostgreSQL one
   * round trip instead of BEGIN, a touch, an insert per entry and COMMIT, each awaited). Returns
   * the entries' ids in order.
   */
  async appendMany(session: { key: string; agentId: string; provider: string; now: number }, entries: readonly TranscriptInput[]): Promise<number[]> {
    const results = await this.db.batch([
      { sql: TOUCH, params: { key: session.key, agentId: session.agentId, provider: session.provider, now: session.now } },
      ...entries.map((entry) => ({ sql: INSERT, params: insertParams(entry) })),
    ]);
    return results.slice(1).map((r) => Number(r.rows[0]!.id));
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

/** An entry as the insert's parameters. */
function insertParams(entry: TranscriptInput): Record<string, string | number | null> {
  return {
    sessionKey: entry.sessionKey,
    role: entry.role,
    tool: entry.tool ?? null,
    toolCallId: entry.toolCallId ?? null,
    // Whatever reached here, a known secret or a credential shape is never stored.
    content: JSON.stringify(scrubDeep(entry.content, { skip: skipImages })),
    details: entry.details === undefined ? null : JSON.stringify(scrubDeep(entry.details, { skip: skipImages })),
    isError: entry.isError ? 1 : 0,
    createdAt: entry.createdAt ?? Date.now(),
  };
}
