import { describe, expect, it } from 'vitest';
import { kindForStatus } from './errors.js';
import { describeModelFailure, parseRetryAfter, RetriesExhaustedError, retryDelayMs, withRetry, type RetryPolicy } from './retry.js';
import { ModelCallError } from './types.js';

const policy: RetryPolicy = { attempts: 4, baseDelayMs: 1000, maxDelayMs: 30_000 };
const headers = (h: Record<string, string>) => ({ get: (n: string) => h[n] ?? null });

describe('parseRetryAfter', () => {
  it.each([
    [{ 'retry-after': '3' }, 3000],
    [{ 'retry-after': '0.5' }, 500],
    [{ 'retry-after-ms': '250', 'retry-after': '9' }, 250],
    [{ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }, 10_000],
    [{ 'retry-after': 'soon' }, undefined],
    [{}, undefined],
  ])('%j → %s ms', (h, expected) => {
    expect(parseRetryAfter(headers(h), Date.parse('Thu, 01 Jan 2026 00:00:00 GMT'))).toBe(expected);
  });
});

describe('retryDelayMs', () => {
  const err = (retryAfterMs?: number) => new ModelCallError('rateLimited', 'x', { retryAfterMs });
  it.each([
    // attempt, random, expected: full jitter in [ceiling/2, ceiling], ceiling doubling from base
    [1, 0, 500],
    [1, 1, 1000],
    [2, 0.5, 1500],
    [3, 1, 4000],
    [10, 1, 30_000],
  ])('attempt %i with random %d waits %i ms', (attempt, random, expected) => {
    expect(retryDelayMs(policy, attempt, err(), () => random)).toBe(expected);
  });
  it('prefers the server hint, capped by maxDelayMs', () => {
    expect(retryDelayMs(policy, 1, err(7000))).toBe(7000);
    expect(retryDelayMs(policy, 1, err(600_000))).toBe(30_000);
  });
});

describe('kindForStatus', () => {
  it.each([
    [429, 'rateLimited'],
    [500, 'server'],
    [503, 'server'],
    [529, 'server'],
    [408, 'timeout'],
    [401, 'auth'],
    [403, 'auth'],
    [404, 'notFound'],
    [400, 'badRequest'],
  ])('%i → %s', (status, kind) => expect(kindForStatus(status)).toBe(kind));
});

describe('withRetry', () => {
  const noSleep = { sleep: async () => {} };
  it('retries retryable errors and returns the first success', async () => {
    const seen: number[] = [];
    const result = await withRetry(
      policy,
      new AbortController().signal,
      async (attempt) => {
        seen.push(attempt);
        if (attempt < 3) throw new ModelCallError('server', 'boom', { status: 500 });
        return 'ok';
      },
      noSleep,
    );
    expect(result).toBe('ok');
    expect(seen).toEqual([1, 2, 3]);
  });

  it('gives up after the last try with the attempt count', async () => {
    const err = await withRetry(policy, new AbortController().signal, async () => {
      throw new ModelCallError('rateLimited', 'slow down', { status: 429 });
    }, noSleep).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect((err as RetriesExhaustedError).attempts).toBe(4);
  });

  it('does not retry a bad request or a call that already streamed text', async () => {
    for (const e of [new ModelCallError('badRequest', 'no', { status: 400 }), new ModelCallError('server', 'cut', { streamed: true })]) {
      let calls = 0;
      await withRetry(policy, new AbortController().signal, async () => {
        calls++;
        throw e;
      }, noSleep).catch(() => {});
      expect(calls).toBe(1);
    }
  });

  it('reports each wait and honours Retry-After', async () => {
    const waits: number[] = [];
    await withRetry(
      { ...policy, attempts: 2 },
      new AbortController().signal,
      async (attempt) => {
        if (attempt === 1) throw new ModelCallError('rateLimited', 'x', { retryAfterMs: 1234 });
        return 1;
      },
      { ...noSleep, onRetry: (i) => waits.push(i.delayMs) },
    );
    expect(waits).toEqual([1234]);
  });

  it('stops waiting when aborted', async () => {
    const controller = new AbortController();
    const pending = withRetry({ ...policy, baseDelayMs: 60_000 }, controller.signal, async () => {
      throw new ModelCallError('server', 'x');
    });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('describeModelFailure', () => {
  it('names the model, the cause, the tries and what to do', () => {
    const text = describeModelFailure('anthropic/claude-x', new RetriesExhaustedError(new ModelCallError('rateLimited', 'slow down', { status: 429 }), 4));
    expect(text).toBe('⚠️ The model anthropic/claude-x is rate-limiting requests (HTTP 429) after 4 tries: slow down. Please try again in a moment.');
    const auth = describeModelFailure('openai/gpt-x', new RetriesExhaustedError(new ModelCallError('auth', 'bad key', { status: 401 }), 1));
    expect(auth).toBe('⚠️ The model openai/gpt-x rejected the API key (HTTP 401): bad key. Check the API key in the environment.');
  });
});
