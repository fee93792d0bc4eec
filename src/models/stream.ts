import { toModelError } from './errors.js';
import type { ModelRequest, ModelResponse } from './types.js';

/** Folds one provider's stream events into a response; `add` returns the text delta, if any. */
export interface StreamAccumulator<E> {
  add(event: E): string | undefined;
  finish(): ModelResponse;
}

/**
 * A stream's events handed over as they are parsed, with no promise per event (an SDK's stream
 * is an AsyncIterable; an answer read directly is this).
 */
export interface EventFeed<E> {
  /** Calls `take` with each event in order; settles when the stream ends, rejects when it fails or `take` throws. */
  each(take: (event: E) => void): Promise<void>;
}

const isFeed = <E>(source: AsyncIterable<E> | EventFeed<E>): source is EventFeed<E> => typeof (source as Partial<EventFeed<E>>).each === 'function';

/**
 * Opens a provider stream, folds it and forwards text deltas. Once text has reached the user
 * a failure is marked as not retryable (a retry would repeat what was already shown).
 */
export async function collectStream<E>(
  open: () => Promise<AsyncIterable<E> | EventFeed<E>>,
  acc: StreamAccumulator<E>,
  request: Pick<ModelRequest, 'onTextDelta'>,
  signal: AbortSignal,
): Promise<ModelResponse> {
  let streamed = false;
  const take = (event: E) => {
    const delta = acc.add(event);
    if (delta && request.onTextDelta) {
      streamed = true;
      request.onTextDelta(delta);
    }
  };
  try {
    const source = await open();
    if (isFeed(source)) await source.each(take);
    else for await (const event of source) take(event);
    return acc.finish();
  } catch (err) {
    throw toModelError(err, signal, streamed);
  }
}
