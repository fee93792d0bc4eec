import type { Message, ModelTool, TextPart, ToolResultMessage } from '../models/types.js';
import { sliceWrapped } from '../tools/untrusted.js';
import { jsonSize } from '../util/json-size.js';

/**
 * Token estimates without a tokenizer: about four characters a token for English and code,
 * which is what the thresholds below were written against. Images count as a flat 1,200.
 */
export const CHARS_PER_TOKEN = 4;
const IMAGE_TOKENS = 1200;

export function messageTokens(message: Message): number {
  let chars = 16;
  let images = 0;
  for (const part of message.content) {
    if (part.type === 'text') chars += part.text.length;
    else if (part.type === 'image') images++;
    else chars += part.name.length + (part.rawArgs?.length ?? JSON.stringify(part.args ?? {}).length) + 16;
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS;
}

export function requestTokens(system: string, tools: readonly ModelTool[], messages: readonly Message[]): number {
  let total = Math.ceil(system.length / CHARS_PER_TOKEN);
  for (const tool of tools) total += Math.ceil((tool.name.length + tool.description.length + jsonSize(tool.parameters).chars) / CHARS_PER_TOKEN);
  for (const m of messages) total += messageTokens(m);
  return total;
}

/** Reference §11: the live per-result cap, `min(floor(ctx·0.3)·4, tier)` characters. */
export function perResultCapChars(contextTokens: number): number {
  const tier = contextTokens >= 200_000 ? 64_000 : contextTokens >= 100_000 ? 32_000 : 16_000;
  return Math.max(2_000, Math.min(Math.floor(contextTokens * 0.3) * CHARS_PER_TOKEN, tier));
}

const IMPORTANT_TAIL = /(error|exception|failed|fatal|traceback|panic|summary|total|done|complete)|\}\s*$/i;

/**
 * Cuts one text to `max` characters: the head, and the tail too when it looks important
 * (errors, summaries, a closing brace), with a notice saying what was left out.
 */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = Math.max(2_000, max);
  const tailWanted = IMPORTANT_TAIL.test(text.slice(-2_000));
  if (tailWanted) {
    const tail = Math.min(Math.floor(keep * 0.3), 4_000);
    const head = keep - tail;
    return `${sliceWrapped(text, 0, head)}\n⚠️ [... middle content omitted — showing head and tail ...]\n${sliceWrapped(text, text.length - tail)}`;
  }
  return `${sliceWrapped(text, 0, keep)}\n[... ${text.length - keep} more characters truncated; rerun with narrower args if needed]`;
}

/** Caps a fresh tool result's text parts, sharing the budget in proportion to their sizes. */
export function capToolResult(content: ToolResultMessage['content'], maxChars: number): ToolResultMessage['content'] {
  const total = content.reduce((n, p) => n + (p.type === 'text' ? p.text.length : 0), 0);
  if (total <= maxChars) return content;
  return content.map((p) => (p.type === 'text' ? { type: 'text', text: truncateText(p.text, Math.floor((maxChars * p.text.length) / total)) } : p));
}

export const CLEARED_TOOL_RESULT = '[Old tool result content cleared]';
const SOFT_TRIM_OVER = 4_000;
const SOFT_TRIM_KEEP = 1_500;
const KEEP_RECENT_ASSISTANT_TURNS = 3;

/**
 * Shrinks older tool results in what the model sees as the context fills (reference §11):
 * from 30% full, results before the last three assistant turns over 4,000 characters keep
 * their first and last 1,500; from 50% with at least 50,000 prunable characters they are
 * cleared. The transcript keeps the originals.
 */
export function pruneToolResults(messages: readonly Message[], usedTokens: number, budgetTokens: number): Message[] {
  const ratio = usedTokens / budgetTokens;
  if (ratio < 0.3) return [...messages];
  let assistants = 0;
  let protectFrom = messages.length;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'assistant' && ++assistants === KEEP_RECENT_ASSISTANT_TURNS) {
      protectFrom = i;
      break;
    }
  }
  if (assistants < KEEP_RECENT_ASSISTANT_TURNS) return [...messages];
  const textOf = (m: ToolResultMessage) => m.content.reduce((n, p) => n + (p.type === 'text' ? p.text.length : 0), 0);
  let prunable = 0;
  for (let i = 0; i < protectFrom; i++) {
    const m = messages[i];
    if (m?.role === 'toolResult' && m.content.some((p) => p.type === 'text' && p.text !== CLEARED_TOOL_RESULT)) prunable += textOf(m);
  }
  const clear = ratio >= 0.5 && prunable >= 50_000;
  return messages.map((m, i) => {
    if (i >= protectFrom || m.role !== 'toolResult') return m;
    if (clear) return { ...m, content: [{ type: 'text', text: CLEARED_TOOL_RESULT }] };
    return {
      ...m,
      content: m.content.map((p): TextPart | typeof p =>
        p.type === 'text' && p.text.length > SOFT_TRIM_OVER
          ? {
              type: 'text',
              text: `${sliceWrapped(p.text, 0, SOFT_TRIM_KEEP)}\n[... ${p.text.length - 2 * SOFT_TRIM_KEEP} characters of an older tool result pruned ...]\n${sliceWrapped(p.text, p.text.length - SOFT_TRIM_KEEP)}`,
            }
          : p,
      ),
    };
  });
}
