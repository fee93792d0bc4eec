import { createHash } from 'node:crypto';
import type { AgentSessionsApi } from '../sessions.js';
import type { ToolImplementation } from '../../tools/types.js';
import { scrubSecrets } from '../../redact/scrub.js';
import { queryTerms } from '../../store/transcript-search.js';
import { wrapUntrusted } from '../../tools/untrusted.js';
import { errorResult } from './result.js';
import { visibleSessions } from './sessions-read.js';
import { DEFAULT_SESSION_ACCESS, type SessionAccess } from './visibility.js';
import { sessionsSearchParameters, MAX_PAGE } from './schemas.js';

/** The most recently active visible sessions searched; older ones are named as not searched. */
export const SEARCH_SCAN_SESSIONS = 2_000;
/** Characters of context either side of the first matching word. */
export const SNIPPET_RADIUS = 120;
/** A cursor past this many results is refused (the ranking is recomputed per page). */
const MAX_OFFSET = 500;

export interface SearchArgs {
  query: string;
  limit?: number;
  cursor?: string;
}

/**
 * The text around the first word of `terms` found in `text` (case-folded), with `…` where it
 * was cut. Scrubbed of secrets again: the store scrubbed the entry when it was written, and a
 * secret registered since then must not come back out through a snippet.
 */
export function snippetOf(text: string, terms: readonly string[], radius = SNIPPET_RADIUS): string {
  const folded = text.toLowerCase();
  let at = -1;
  let len = 0;
  for (const term of terms) {
    const i = folded.indexOf(term);
    if (i >= 0 && (at < 0 || i < at)) {
      at = i;
      len = term.length;
    }
  }
  // Folding may change lengths (rare letters) or the engine may have matched a folded form
  // (diacritics): then the text's beginning stands for it.
  if (at < 0 || folded.length !== text.length) at = 0;
  const start = Math.max(0, at - radius);
  const end = Math.min(text.length, at + len + radius);
  const cut = `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`;
  return scrubSecrets(cut.replace(/\s+/g, ' ').trim());
}

/** The hash a cursor carries, so a cursor of one query is refused by another. */
const queryTag = (terms: readonly string[]): string => createHash('sha256').update(terms.join('\0')).digest('hex').slice(0, 12);

export function encodeCursor(offset: number, terms: readonly string[]): string {
  return Buffer.from(JSON.stringify({ o: offset, q: queryTag(terms) })).toString('base64url');
}

/** The offset a cursor stands for, or an error naming what is wrong with it. */
export function decodeCursor(cursor: string, terms: readonly string[]): { ok: true; offset: number } | { ok: false; message: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
  } catch {
    return { ok: false, message: 'cursor: not a cursor from sessions_search' };
  }
  const { o, q } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { o?: unknown; q?: unknown };
  if (typeof o !== 'number' || !Number.isInteger(o) || o < 0 || o > MAX_OFFSET) return { ok: false, message: 'cursor: not a cursor from sessions_search' };
  if (q !== queryTag(terms)) return { ok: false, message: 'cursor: it belongs to another query; search again without a cursor' };
  return { ok: true, offset: o };
}

/**
 * `sessions_search`: full-text search over the transcripts this call may read — the sessions
 * `sessions_list` shows, decided by the same function — best match first, each hit with its
 * session key, seq and a snippet. Everything quoted from the transcripts is wrapped as untrusted.
 */
export function createSessionsSearchTool(sessions: AgentSessionsApi, access: SessionAccess = DEFAULT_SESSION_ACCESS): ToolImplementation<SearchArgs> {
  return {
    id: 'sessions_search',
    parameters: sessionsSearchParameters,
    async execute(args, ctx) {
      const parsed = queryTerms(args.query);
      if (!parsed.ok) return errorResult(parsed.message);
      const { terms } = parsed;
      let offset = 0;
      if (args.cursor !== undefined) {
        const decoded = decodeCursor(args.cursor, terms);
        if (!decoded.ok) return errorResult(decoded.message);
        offset = decoded.offset;
      }
      const limit = args.limit ?? 10;
      const visible = await visibleSessions(sessions, ctx, access, SEARCH_SCAN_SESSIONS);
      // One more than the page says whether another page exists.
      const found = await sessions.search({ sessionKeys: visible.map((s) => s.sessionKey), terms, limit: limit + 1, offset });
      if (!found.ok) return errorResult(`sessions_search: ${found.message}`);
      const page = found.value.slice(0, limit);
      const more = found.value.length > limit && offset + limit <= MAX_OFFSET;
      const nextCursor = more ? encodeCursor(offset + limit, terms) : undefined;
      const results = page.map((h) => ({ sessionKey: h.sessionKey, seq: h.seq, role: h.role, at: new Date(h.createdAt).toISOString(), snippet: snippetOf(h.text, terms) }));
      const lines = results.map((r, i) => `${offset + i + 1}. ${r.sessionKey} #${r.seq} ${r.at} ${r.role}: ${r.snippet}`);
      const footer = [
        `[${results.length} result${results.length === 1 ? '' : 's'} for ${terms.map((t) => JSON.stringify(t)).join(' ')} in ${visible.length} session${visible.length === 1 ? '' : 's'} you can read`,
        nextCursor ? `; more with cursor="${nextCursor}"` : '',
        visible.length >= SEARCH_SCAN_SESSIONS ? `; only the ${SEARCH_SCAN_SESSIONS} most recently active sessions were searched` : '',
        '. Read around a hit with sessions_history(sessionKey, beforeSeq=seq+1).]',
      ].join('');
      return {
        content: [
          ...(lines.length > 0 ? [{ type: 'text' as const, text: wrapUntrusted('sessions_search', lines.join('\n')) }] : []),
          { type: 'text' as const, text: footer },
        ],
        details: { terms, offset, results: results.map(({ snippet: _s, ...r }) => r), ...(nextCursor ? { nextCursor } : {}) },
      };
    },
  };
}
