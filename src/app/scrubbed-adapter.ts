// Every message and card a chat adapter posts passes the one secret scrubber first: replies,
// streamed edits, approval cards and their updates, long output sent as a file. Wrapped once,
// where the adapters are made, so no posting path can be forgotten.
import { scrubDeep, scrubSecrets } from '../redact/scrub.js';
import type { StreamSurface } from '../gateway/reply-stream.js';
import type { ChatAdapter, OutboundMessage } from '../gateway/types.js';

function scrubMessage(message: OutboundMessage): OutboundMessage {
  const text = scrubSecrets(message.text);
  const attachment = message.attachment ? { ...message.attachment, content: scrubSecrets(message.attachment.content) } : undefined;
  return { ...message, text, ...(attachment ? { attachment } : {}) };
}

function scrubbedStream(surface: StreamSurface): StreamSurface {
  return {
    limit: surface.limit,
    minIntervalMs: surface.minIntervalMs,
    post: (text) => surface.post(scrubSecrets(text)),
    edit: (id, text) => surface.edit(id, scrubSecrets(text)),
    ...(surface.remove ? { remove: (id: string) => surface.remove!(id) } : {}),
    ...(surface.complete ? { complete: (ids: readonly string[], text: string) => surface.complete!(ids, scrubSecrets(text)) } : {}),
  };
}

/** The adapter with its outbound text scrubbed; everything else (state, getters, inbound) is the adapter's own. */
export function scrubbedAdapter<A extends ChatAdapter>(adapter: A): A {
  const renderer = adapter.approvals;
  const approvals = {
    ...renderer,
    provider: renderer.provider,
    show: (request: Parameters<typeof renderer.show>[0]) => renderer.show(scrubDeep(request)),
    update: (request: Parameters<typeof renderer.update>[0]) => renderer.update(scrubDeep(request)),
  };
  return new Proxy(adapter, {
    get(target, prop) {
      if (prop === 'send') return (to: Parameters<ChatAdapter['send']>[0], message: OutboundMessage) => target.send(to, scrubMessage(message));
      if (prop === 'approvals') return approvals;
      // The pairing card shows the sender's display name: scrubbed like every posted text (the code and ids are the card's own).
      if (prop === 'askPairing' && target.askPairing) {
        return (request: Parameters<NonNullable<ChatAdapter['askPairing']>>[0]) =>
          target.askPairing!({ ...request, ...(request.userName !== undefined ? { userName: scrubSecrets(request.userName) } : {}) });
      }
      if (prop === 'streamTo' && target.streamTo) {
        return (to: Parameters<NonNullable<ChatAdapter['streamTo']>>[0], recipient?: Parameters<NonNullable<ChatAdapter['streamTo']>>[1]) => {
          const surface = target.streamTo!(to, recipient);
          return surface ? scrubbedStream(surface) : undefined;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
