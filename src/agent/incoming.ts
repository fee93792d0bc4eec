// What a person's message becomes in the transcript and in the model's request. Apart from the
// turn loop so the gateway can write a message at its place without loading the loop at start.
import type { TurnContext } from '../policy/context.js';
import type { UserMessage } from '../models/types.js';
import { wrapUntrusted } from '../tools/untrusted.js';
import type { TranscriptAppend, TurnInput } from './types.js';

/** The user's message as the model sees it; relayed text from others is wrapped as untrusted. */
export function inputMessage(input: TurnInput, chat: string): UserMessage {
  const relayed = input.origin !== undefined && input.origin !== 'user';
  const text = relayed
    ? wrapUntrusted(`${input.origin}:${input.senderName ?? 'unknown'}`, input.text)
    : chat !== 'dm' && input.senderName
      ? `${input.senderName}: ${input.text}`
      : input.text;
  return { role: 'user', content: [{ type: 'text', text }, ...(input.images ?? [])] };
}

/** Who sent the turn's input, recorded with it: the requester, for their own message (not for relayed words). */
export function senderOf(input: TurnInput, turn: TurnContext): { id: string; name: string | undefined } | undefined {
  return input.origin === undefined && turn.senderId !== undefined ? { id: turn.senderId, name: turn.senderName } : undefined;
}

/**
 * The transcript entry a person's message becomes, as the turn writes it when no plugin adds
 * context to it: what the message's place writes (`TurnStartRead.write`) before the turn runs.
 */
export function incomingAppend(input: TurnInput, turn: TurnContext): TranscriptAppend {
  const sender = senderOf(input, turn);
  return { kind: 'message', message: inputMessage(input, turn.chat), ...(sender ? { sender } : {}) };
}
