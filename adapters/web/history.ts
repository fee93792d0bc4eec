import type { Db } from '../../src/store/db.js';
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
  currentSessionId(): Promise<string | undefined>;
  /** The newest `limit` items of a session, oldest first. */
  load(sessionId: string | undefined, limit: number): Promise<WebHistoryItem[]>;
  /** Records a page message id; false when it arrived before. */
  firstDelivery(id: string, now?: number): Promise<boolean>;
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
    list(filter: { sessionKey?: string }): Promise<ApprovalRequest[]>;
    history(filter: { sessionKey?: string; limit?: number }): Promise<ApprovalRequest[]>;
  };
}

export function storeWebHistory(db: Db, deps: WebHistoryDeps): WebHistory {
  // Old ids go at the first use; nothing waits for it.
  let pruned: Promise<unknown> | undefined;
  const prune = () => (pruned ??= db.run('DELETE FROM web_inbound WHERE received_at < ?', [Date.now() - INBOUND_RETENTION_MS]).catch(() => undefined));

  return {
    sessionKeyOf: deps.sessionKeyOf,
    async currentSessionId() {
      const base = deps.sessionKeyOf(undefined);
      const prefix = `${base}:session:`;
      const key = await db.value<string>(
        `SELECT session_key FROM session_contexts WHERE session_key = @base OR substr(session_key, 1, length(CAST(@prefix AS TEXT))) = @prefix
         ORDER BY created_at DESC, rowid DESC LIMIT 1`,
        { base, prefix },
      );
      return key?.startsWith(prefix) ? key.slice(prefix.length) : undefined;
    },
    async load(sessionId, limit) {
      const sessionKey = deps.sessionKeyOf(sessionId);
      // Tool rows and intermediate steps are skipped, so read well past `limit` rows.
      const transcript = (await db.all<TranscriptRow>('SELECT role, content, created_at FROM transcript_entries WHERE session_key = ? ORDER BY id DESC LIMIT ?', [sessionKey, limit * 8])).reverse();
      const cards = [...(await deps.approvals.history({ sessionKey, limit })), ...(await deps.approvals.list({ sessionKey }))];
      const items: Array<{ at: number; order: number; item: WebHistoryItem }> = [
        ...conversationOf(transcript).map((message, order) => ({ at: message.at, order, item: { kind: 'message' as const, message } })),
        ...cards.map((request) => ({ at: request.createdAt, order: 0, item: { kind: 'card' as const, request } })),
      ];
      items.sort((a, b) => a.at - b.at || (a.item.kind === b.item.kind ? a.order - b.order : a.item.kind === 'card' ? 1 : -1));
      return items.slice(-limit).map((i) => i.item);
    },
    async firstDelivery(id, now = Date.now()) {
      await prune();
      return (await db.run('INSERT INTO web_inbound (id, received_at) VALUES (?, ?) ON CONFLICT DO NOTHING', [id, now])).changes === 1;
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
