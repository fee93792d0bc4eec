import { toModelError } from './errors.js';
import type { ModelRequest, ModelResponse } from './types.js';

/** Folds one provider's stream events into a response; `add` returns the text delta, if any. */
export interface StreamAccumulator<E> {
  add(event: E): string | undefined;
  finish(): ModelResponse;
}

/**
 * Opens a provider stream, folds it and forwards text deltas. Once text has reached the user
 * a failure is marked as not retryable (a retry would repeat what was already shown).
 */
export async function collectStream<E>(
  open: () => Promise<AsyncIterable<E>>,
  acc: StreamAccumulator<E>,
  request: Pick<ModelRequest, 'onTextDelta'>,
  signal: AbortSignal,
): Promise<ModelResponse> {
  let streamed = false;
  try {
    for await (const event of await open()) {
      const delta = acc.add(event);
      if (delta && request.onTextDelta) {
        streamed = true;
        request.onTextDelta(delta);
      }
    }
    return acc.finish();
  } catch (err) {
    throw toModelError(err, signal, streamed);
  }
}
