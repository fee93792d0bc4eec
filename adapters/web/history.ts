import type { Database } from 'better-sqlite3';
import type { ApprovalRequest } from '../../src/approvals/types.js';
import { typedSkillCommand } from '../../src/gateway/skill-commands.js';

/**
 * The web chat's memory, kept in SQLite, so a restart loses nothing the page should show:
 * - which session the web user is in: the newest session the store recorded for the web
 *   user (`session_contexts`; `/new` records the fresh one at once);
 * - what the page shows of a session: its conversation from the transcript — the person's
 *   messages and Warden's answer to each — and its approval cards in their current state;
 * - which page messages arrived, so a message the page sends again after a reconnect (its
 *   acknowledgement was lost) runs once.
 *
 * Command answers (`/tools`, `/status` …) are not part of the transcript; the page shows them
 * until the server restarts. The ids' table is `web_inbound` (`./migrations.ts`).
 */

/** How long a page message id is remembered: far longer than any page waits to resend. */
const INBOUND_RETENTION_MS = 7 * 24 * 3600_000;

export type WebRole = 'user' | 'bot' | 'notice';

export type WebHistoryItem =
  | { kind: 'message'; message: { role: WebRole; text: string; at: number } }
  | { kind: 'card'; request: ApprovalRequest };

export interface WebHistory {
  /** The session key of a web session (`undefined`: the first one). */
  sessionKeyOf(sessionId: string | undefined): string;
  /** The web user's current session, as the store records it. */
  currentSessionId(): string | undefined;
  /** The newest `limit` items of a session, oldest first. */
  load(sessionId: string | undefined, limit: number): WebHistoryItem[];
  /** Records a page message id; false when it arrived before. */
  firstDelivery(id: string, now?: number): boolean;
}

interface TranscriptRow {
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string;
  created_at: number;
}

export interface WebHistoryDeps {
  /** `sessionKeyFor` of the web user with a session id. */
  sessionKeyOf(sessionId: string | undefined): string;
  approvals: {
    list(filter: { sessionKey?: string }): ApprovalRequest[];
    history(filter: { sessionKey?: string; limit?: number }): ApprovalRequest[];
  };
}

export function sqliteWebHistory(db: Database, deps: WebHistoryDeps): WebHistory {
  const newest = db.prepare(
    `SELECT session_key FROM session_contexts WHERE session_key = @base OR substr(session_key, 1, length(@prefix)) = @prefix
     ORDER BY created_at DESC, rowid DESC LIMIT 1`,
  );
  const rows = db.prepare('SELECT role, content, created_at FROM transcript_entries WHERE session_key = ? ORDER BY id DESC LIMIT ?');
  const remember = db.prepare('INSERT OR IGNORE INTO web_inbound (id, received_at) VALUES (?, ?)');
  const forget = db.prepare('DELETE FROM web_inbound WHERE received_at < ?');
  forget.run(Date.now() - INBOUND_RETENTION_MS);

  return {
    sessionKeyOf: deps.sessionKeyOf,
    currentSessionId() {
      const base = deps.sessionKeyOf(undefined);
      const prefix = `${base}:session:`;
      const key = newest.pluck().get({ base, prefix }) as string | undefined;
      return key?.startsWith(prefix) ? key.slice(prefix.length) : undefined;
    },
    load(sessionId, limit) {
      const sessionKey = deps.sessionKeyOf(sessionId);
      // Tool rows and intermediate steps are skipped, so read well past `limit` rows.
      const transcript = (rows.all(sessionKey, limit * 8) as TranscriptRow[]).reverse();
      const cards = [...deps.approvals.history({ sessionKey, limit }), ...deps.approvals.list({ sessionKey })];
      const items: Array<{ at: number; order: number; item: WebHistoryItem }> = [
        ...conversationOf(transcript).map((message, order) => ({ at: message.at, order, item: { kind: 'message' as const, message } })),
        ...cards.map((request) => ({ at: request.createdAt, order: 0, item: { kind: 'card' as const, request } })),
      ];
      items.sort((a, b) => a.at - b.at || (a.item.kind === b.item.kind ? a.order - b.order : a.item.kind === 'card' ? 1 : -1));
      return items.slice(-limit).map((i) => i.item);
    },
    firstDelivery(id, now = Date.now()) {
      return remember.run(id, now).changes === 1;
    },
  };
}

/**
 * The chat as it read: each message of the person, then Warden's answer — the last text the
 * model wrote before the next message, which is what the chat was sent. Relayed input (results
 * of subagents, other sessions' messages) is not the person's and is left out; a skill turn
 * shows the command that was typed; notes Warden wrote into the transcript (an approval
 * interrupted by a restart) are notices.
 */
export function conversationOf(rows: readonly TranscriptRow[]): Array<{ role: WebRole; text: string; at: number }> {
  const out: Array<{ role: WebRole; text: string; at: number }> = [];
  let answer: { text: string; at: number } | undefined;
  const flush = () => {
    if (answer) out.push({ role: 'bot', ...answer });
    answer = undefined;
  };
  for (const row of rows) {
    const content = parse(row.content);
    if (row.role === 'user') {
      const text = textOf(content);
      // A turn Warden started (subagent results, another session's message) still answered here.
      flush();
      if (text === '' || text.startsWith('<untrusted-') || text.startsWith('Results from your subagents:')) continue;
      out.push({ role: 'user', text: typedSkillCommand(text) ?? text, at: row.created_at });
    } else if (row.role === 'assistant') {
      const text = textOf(content);
      if (text !== '') answer = { text, at: row.created_at };
    } else if (row.role === 'system' && typeof content === 'string') {
      flush();
      out.push({ role: 'notice', text: content, at: row.created_at });
    }
  }
  flush();
  return out;
}

function parse(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content.trim();
  if (!Array.isArray(content)) return '';
  return content
    .flatMap((part: unknown) => (part && typeof part === 'object' && (part as { type?: unknown }).type === 'text' ? [String((part as { text?: unknown }).text ?? '')] : []))
    .join('\n')
    .trim();
}
