import type { Message } from '../models/types.js';
import { isWrappedUntrusted, wrapUntrusted } from '../tools/untrusted.js';
import type { TranscriptEntry } from './types.js';

/**
 * A shared channel session holds the messages of everyone who spoke to the agent there. In a
 * turn one person asked for, the others' earlier messages are what they said, not what the
 * requester asks: each is shown to the model as untrusted data from its sender (the nonce+MAC
 * wrapper, `source="user:ID (NAME)"`), so one user cannot instruct the agent as the requester
 * or an owner by having spoken first. The requester's own messages and entries without a
 * recorded sender (Warden's notices, summaries, subagent results) are left as they are.
 * Pure; the stored transcript is never rewritten (whose message is foreign depends on who asks).
 */
export function asSeenBy(entries: readonly TranscriptEntry[], requesterId: string | undefined): TranscriptEntry[] {
  return entries.map((entry) => {
    const sender = entry.sender;
    if (entry.message.role !== 'user' || sender === undefined || sender.id === requesterId) return entry;
    return { ...entry, message: wrappedOnce(entry, sender) };
  });
}

/**
 * The same entry is shown with the same wrapper in every turn of the same requester, so the
 * request stays byte-identical for the provider's prompt cache (a wrapper's nonce is fresh per
 * block, not per request: reusing a block is what a stored tool result does too).
 */
const shown = new Map<string, { original: Message; wrapped: Message }>();
const SHOWN_MAX = 5_000;
function wrappedOnce(entry: TranscriptEntry, sender: NonNullable<TranscriptEntry['sender']>): Message {
  const key = `${entry.seq}\0${entry.createdAt}\0${sender.id}`;
  const hit = shown.get(key);
  if (hit && hit.original === entry.message) return hit.wrapped;
  if (hit && JSON.stringify(hit.original) === JSON.stringify(entry.message)) return hit.wrapped;
  const wrapped = wrapForeign(entry.message as Extract<Message, { role: 'user' }>, sender);
  if (shown.size >= SHOWN_MAX) shown.delete(shown.keys().next().value!);
  shown.set(key, { original: entry.message, wrapped });
  return wrapped;
}

/** Every text part is wrapped (one wrapper per part); images stay, they carry no instructions the wrapper could mark. */
function wrapForeign(message: Extract<Message, { role: 'user' }>, sender: NonNullable<TranscriptEntry['sender']>): Message {
  const source = sender.name ? `user:${sender.id} (${sender.name})` : `user:${sender.id}`;
  const content = message.content.map((part) =>
    part.type === 'text' && !isWrappedUntrusted(part.text) ? { ...part, text: wrapUntrusted(source, part.text) } : part,
  );
  return { ...message, content };
}
