import type { ToolContent, ToolFile, ToolResult } from './types.js';

/**
 * Tool results as the model reads them (reference §11): one shape, a cap per result with
 * notices that say what was cut, and `details` kept for operators only.
 */

/** Per-result cap when the model's context size is unknown. */
export const DEFAULT_MAX_RESULT_CHARS = 16_000;
/** Never keep less than this much of a result when truncating. */
export const MIN_KEEP_CHARS = 2_000;
/** Stored details: total JSON size and longest string. */
export const MAX_DETAILS_BYTES = 8_192;
export const MAX_DETAILS_STRING_CHARS = 2_000;

export const MIDDLE_OMISSION_MARKER = '\n\n⚠️ [... middle content omitted — showing head and tail ...]\n\n';
export const truncationNotice = (chars: number): string => `\n\n[... ${Math.max(1, Math.floor(chars))} more characters truncated; rerun with narrower args if needed]`;

/** `{content: [pretty JSON], details: value}`, the shape of structured results. */
export function jsonResult(value: unknown, isError = false): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) ?? 'null' }], details: value, ...(isError ? { isError: true } : {}) };
}

/** A thrown error as the model sees it: `{status:"error", tool, error}`. */
export function errorToolResult(tool: string, error: unknown): ToolResult {
  const message = error instanceof Error ? error.message || error.name : typeof error === 'string' ? error : safeJson(error);
  return jsonResult({ status: 'error', tool, error: message }, true);
}

const ERROR_STATUSES = new Set([
  'error', 'failed', 'failure', 'timeout', 'timed_out', 'blocked', 'denied', 'forbidden', 'unavailable',
  'approval-unavailable', 'disabled', 'aborted', 'cancelled', 'canceled', 'killed', 'invalid',
]);

/** Whether details describe a failure (reference §11 error classification). */
export function detailsLookLikeError(details: unknown): boolean {
  if (!details || typeof details !== 'object' || Array.isArray(details)) return false;
  const d = details as Record<string, unknown>;
  if (d.ok === false || d.success === false || d.timedOut === true) return true;
  if (typeof d.status === 'string' && ERROR_STATUSES.has(d.status.toLowerCase())) return true;
  if (d.error !== undefined && d.error !== null && d.error !== false && d.error !== '') return true;
  return typeof d.exitCode === 'number' && d.exitCode !== 0;
}

/**
 * Any value a tool returned, as a ToolResult: `{content[]}` kept (invalid blocks dropped);
 * anything else becomes JSON text with the value as details; nothing at all becomes
 * `{status:"ok", tool}`.
 */
export function normalizeToolResult(tool: string, value: unknown): ToolResult {
  if (value && typeof value === 'object' && Array.isArray((value as ToolResult).content)) {
    const raw = value as ToolResult;
    const content = raw.content.filter(isContentBlock);
    const isError = raw.isError === true || detailsLookLikeError(raw.details);
    const files = Array.isArray(raw.files) ? raw.files.filter(isToolFile) : [];
    return { content, ...(raw.details !== undefined ? { details: raw.details } : {}), ...(isError ? { isError } : {}), ...(files.length > 0 && !isError ? { files } : {}) };
  }
  if (value === undefined || value === null) return jsonResult({ status: 'ok', tool });
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] };
  return jsonResult(value, detailsLookLikeError(value));
}

/** A file for the chat, as a tool (a plugin's too) may attach one: bytes, a name and a type. */
function isToolFile(file: unknown): file is ToolFile {
  if (!file || typeof file !== 'object') return false;
  const f = file as Record<string, unknown>;
  return Buffer.isBuffer(f.data) && typeof f.name === 'string' && f.name !== '' && typeof f.mimeType === 'string' && (f.path === undefined || typeof f.path === 'string');
}

function isContentBlock(block: unknown): block is ToolContent {
  if (!block || typeof block !== 'object') return false;
  const b = block as Record<string, unknown>;
  if (b.type === 'text') return typeof b.text === 'string';
  if (b.type === 'image') return typeof b.data === 'string' && typeof b.mimeType === 'string';
  return false;
}

function hasImportantTail(text: string): boolean {
  const tail = text.slice(-2000).toLowerCase();
  return (
    /\b(error|exception|failed|fatal|traceback|panic|stack trace|errno|exit code)\b/.test(tail) ||
    /\}\s*$/.test(tail.trim()) ||
    /\b(total|summary|result|complete|finished|done)\b/.test(tail)
  );
}

/** Appends the notice, trimming kept text until text + notice fits `maxChars`. */
function withNotice(kept: string, originalLength: number, maxChars: number): string {
  let text = kept;
  for (;;) {
    const out = text + truncationNotice(originalLength - text.length);
    if (out.length <= maxChars || text.length === 0) return out.length <= maxChars ? out : out.slice(0, maxChars);
    text = text.slice(0, Math.max(0, text.length - (out.length - maxChars)));
  }
}

/**
 * Cuts one text to `maxChars`: head only, or head + tail when the end looks important
 * (errors, summaries, a closing brace); cuts land on a newline when one is near.
 */
export function truncateText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const minKeep = Math.max(0, Math.min(MIN_KEEP_CHARS, maxChars - truncationNotice(1).length));
  const budget = Math.max(minKeep, maxChars - truncationNotice(text.length - maxChars).length);
  if (hasImportantTail(text) && budget > minKeep * 2) {
    const tailBudget = Math.min(Math.floor(budget * 0.3), 4_000);
    const headBudget = budget - tailBudget - MIDDLE_OMISSION_MARKER.length;
    if (headBudget > minKeep) {
      let headCut = headBudget;
      const headNewline = text.lastIndexOf('\n', headBudget);
      if (headNewline > headBudget * 0.8) headCut = headNewline;
      let tailStart = text.length - tailBudget;
      const tailNewline = text.indexOf('\n', tailStart);
      if (tailNewline !== -1 && tailNewline < tailStart + tailBudget * 0.2) tailStart = tailNewline + 1;
      return withNotice(text.slice(0, headCut) + MIDDLE_OMISSION_MARKER + text.slice(tailStart), text.length, maxChars);
    }
  }
  let cut = budget;
  const newline = text.lastIndexOf('\n', budget);
  if (newline > budget * 0.8) cut = newline;
  return withNotice(text.slice(0, cut), text.length, maxChars);
}

/** Caps the text blocks of a result to `maxChars` in total, sharing the budget by size. */
export function truncateToolResult(result: ToolResult, maxChars = DEFAULT_MAX_RESULT_CHARS): { result: ToolResult; truncated: boolean } {
  const total = result.content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : 0), 0);
  if (total <= maxChars) return { result, truncated: false };
  const minKeep = Math.min(MIN_KEEP_CHARS, maxChars);
  const content = result.content.map((block): ToolContent => {
    if (block.type !== 'text') return block;
    const share = Math.floor(maxChars * (block.text.length / total));
    const budget = Math.max(1, Math.min(maxChars, Math.max(minKeep + truncationNotice(block.text.length).length, share)));
    return { type: 'text', text: truncateText(block.text, budget) };
  });
  return { result: { ...result, content }, truncated: true };
}

const SECRET_KEY = /(^|[_-])(token|secret|password|passwd|api[_-]?key|authorization|cookie|private[_-]?key)$/i;

/**
 * Details as stored beside the transcript: strings over 2,000 chars cut, values under
 * secret-looking keys redacted, the whole at most 8,192 bytes of JSON (else a preview).
 */
export function capDetails(details: unknown): unknown {
  if (details === undefined) return undefined;
  const walked = walk(details, 0, new WeakSet());
  const json = safeJson(walked);
  if (Buffer.byteLength(json, 'utf8') <= MAX_DETAILS_BYTES) return walked;
  let preview = json.slice(0, MAX_DETAILS_BYTES - 200);
  while (Buffer.byteLength(preview, 'utf8') > MAX_DETAILS_BYTES - 200) preview = preview.slice(0, -100);
  return { truncated: true, originalBytes: Buffer.byteLength(json, 'utf8'), preview };
}

function walk(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') {
    return value.length > MAX_DETAILS_STRING_CHARS ? `${value.slice(0, MAX_DETAILS_STRING_CHARS)}… [${value.length - MAX_DETAILS_STRING_CHARS} more characters]` : value;
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (!value || typeof value !== 'object') return value;
  if (seen.has(value) || depth > 20) return '[circular or too deep]';
  // `seen` holds the current path only, so a value shared by two branches is kept twice.
  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) out = value.map((v) => walk(v, depth + 1, seen));
  else {
    const obj: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) obj[key] = SECRET_KEY.test(key) && v !== undefined && v !== null ? '[redacted]' : walk(v, depth + 1, seen);
    out = obj;
  }
  seen.delete(value);
  return out;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
