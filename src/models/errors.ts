import { parseRetryAfter } from './retry.js';
import { isAbortError, ModelCallError, type ModelErrorKind } from './types.js';

/** The parts of an SDK error (Anthropic, OpenAI, Gemini) the classification reads. */
interface SdkErrorLike {
  name?: string;
  status?: number;
  message?: string;
  headers?: unknown;
}

function headerReader(headers: unknown): { get(name: string): string | null } | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return headers as Headers;
  if (typeof headers === 'object') {
    const record = headers as Record<string, string | undefined>;
    return { get: (name) => record[name] ?? record[name.toLowerCase()] ?? null };
  }
  return undefined;
}

export function kindForStatus(status: number): ModelErrorKind {
  if (status === 429) return 'rateLimited';
  if (status === 408) return 'timeout';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'notFound';
  // 529 is Anthropic's "overloaded".
  if (status >= 500) return 'server';
  if (status >= 400) return 'badRequest';
  return 'other';
}

/**
 * What an adapter throws: an AbortError when its signal fired (SDKs disagree on how they
 * report that), else a ModelCallError.
 */
export function toModelError(err: unknown, signal: AbortSignal, streamed: boolean): unknown {
  if (signal.aborted) return new DOMException('The model call was aborted', 'AbortError');
  return classifySdkError(err, streamed);
}

/**
 * Maps whatever an SDK threw to a ModelCallError. Abort errors pass through untouched so the
 * loop can tell a /stop from a failure.
 */
export function classifySdkError(err: unknown, streamed = false): unknown {
  if (isAbortError(err) || err instanceof ModelCallError) return err;
  const e = (err ?? {}) as SdkErrorLike;
  const name = e.name ?? '';
  const message = firstLine(e.message ?? String(err));
  if (/timeout/i.test(name) || /timed? ?out/i.test(message)) {
    return new ModelCallError('timeout', message, { cause: err, streamed });
  }
  if (typeof e.status === 'number' && e.status > 0) {
    return new ModelCallError(kindForStatus(e.status), message, {
      status: e.status,
      retryAfterMs: parseRetryAfter(headerReader(e.headers)),
      cause: err,
      streamed,
    });
  }
  if (/connection|fetch failed|ECONNREFUSED|ECONNRESET|socket|network/i.test(`${name} ${message}`)) {
    return new ModelCallError('network', message, { cause: err, streamed });
  }
  return new ModelCallError('other', message, { cause: err, streamed });
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/** Parses tool-call arguments sent as a JSON string (OpenAI) into an object or an error. */
export function parseToolArgs(raw: string): { args: Record<string, unknown> } | { error: string } {
  const text = raw.trim() === '' ? '{}' : raw;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `arguments are not valid JSON: ${(err as Error).message}` };
  }
  if (value === null) return { args: {} };
  if (typeof value !== 'object' || Array.isArray(value)) return { error: 'arguments must be a JSON object' };
  return { args: value as Record<string, unknown> };
}
