import OpenAI from 'openai';
import { toModelError } from '../../../models/errors.js';
import { describeModelFailure, RetriesExhaustedError, withRetry } from '../../../models/retry.js';
import type { MediaModel } from './media-model.js';

/** One SDK client per media model; retries are ours (`withRetry`), so the SDK makes none. */
export function mediaClient(model: MediaModel, timeoutMs: number): OpenAI {
  return new OpenAI({ apiKey: model.apiKey ?? 'none', baseURL: model.settings.baseUrl ?? null, timeout: timeoutMs, maxRetries: 0 });
}

/**
 * Calls a media endpoint under the provider's retry policy (429 and 5xx are retried). A final
 * failure comes back as the sentence the model reads; an abort is rethrown, since the turn is
 * being stopped rather than failing.
 */
export async function callMedia<T>(model: MediaModel, signal: AbortSignal, call: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: string }> {
  try {
    const value = await withRetry(model.settings.retry, signal, async () => {
      try {
        return await call();
      } catch (err) {
        throw toModelError(err, signal, false);
      }
    });
    return { ok: true, value };
  } catch (err) {
    if (err instanceof RetriesExhaustedError) return { ok: false, error: describeModelFailure(model.ref, err) };
    throw err;
  }
}
