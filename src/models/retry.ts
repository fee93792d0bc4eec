import { setTimeout as sleep } from 'node:timers/promises';
import { ModelCallError } from './types.js';

export interface RetryPolicy {
  /** Total tries, the first one included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 1000, maxDelayMs: 30_000 };

/**
 * Delay before try `attempt + 1` (attempt counts from 1): the server's Retry-After when it
 * sent one (capped by maxDelayMs), else exponential backoff with full jitter, so many
 * sessions hitting one rate limit do not retry in lockstep.
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, error: ModelCallError, random: () => number = Math.random): number {
  const hinted = error.details.retryAfterMs;
  if (hinted !== undefined && hinted >= 0) return Math.min(hinted, policy.maxDelayMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Parses `retry-after-ms`, then `retry-after` as seconds or an HTTP date. */
export function parseRetryAfter(headers: { get(name: string): string | null } | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers.get('retry-after');
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export interface RetryHooks {
  onRetry?: (info: { attempt: number; delayMs: number; error: ModelCallError }) => void;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
}

/**
 * Runs `call` until it succeeds, fails with a non-retryable error, or the tries run out; the
 * last error is rethrown with `attempts` recorded. Waiting honours the abort signal.
 */
export async function withRetry<T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  call: (attempt: number) => Promise<T>,
  hooks: RetryHooks = {},
): Promise<T> {
  const wait = hooks.sleep ?? ((ms: number, s: AbortSignal) => sleep(ms, undefined, { signal: s }));
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(attempt);
    } catch (err) {
      if (!(err instanceof ModelCallError) || !err.retryable || attempt >= policy.attempts || signal.aborted) {
        if (err instanceof ModelCallError) throw new RetriesExhaustedError(err, attempt);
        throw err;
      }
      const delayMs = retryDelayMs(policy, attempt, err, hooks.random);
      hooks.onRetry?.({ attempt, delayMs, error: err });
      await wait(delayMs, signal);
    }
  }
}

/** The final failure of a model call, with how many tries were made. */
export class RetriesExhaustedError extends Error {
  override readonly name = 'RetriesExhaustedError';
  constructor(
    readonly last: ModelCallError,
    readonly attempts: number,
  ) {
    super(last.message, { cause: last });
  }
}

const KIND_TEXT: Record<ModelCallError['kind'], string> = {
  rateLimited: 'is rate-limiting requests',
  server: 'returned a server error',
  timeout: 'did not answer in time',
  network: 'could not be reached',
  auth: 'rejected the API key',
  badRequest: 'rejected the request',
  notFound: 'does not know this model',
  other: 'failed',
};

/** The sentence posted in the chat when a model call gives up. */
export function describeModelFailure(modelRef: string, error: RetriesExhaustedError): string {
  const { last, attempts } = error;
  const tries = attempts > 1 ? ` after ${attempts} tries` : '';
  const status = last.details.status ? ` (HTTP ${last.details.status})` : '';
  const advice =
    last.kind === 'auth'
      ? ' Check the API key in the environment.'
      : last.kind === 'notFound'
        ? ' Check the model id in the config.'
        : last.retryable || last.details.streamed
          ? ' Please try again in a moment.'
          : '';
  return `⚠️ The model ${modelRef} ${KIND_TEXT[last.kind]}${status}${tries}: ${last.message}.${advice}`;
}
