/**
 * The ask_user tool's prompt on the platforms: one message per question, a button per option
 * (`warden-ask:<id>:<question>:<option>`) and an "Other…" button (`warden-ask-other:<id>:<question>`)
 * opening a form (`warden-ask-modal:<id>:<question>`) with one text field. Ids stay far under
 * Discord's 100-character custom_id limit (a UUID and two digits). The app (user-questions.ts)
 * decides who may answer; the adapter only shows its words, privately to the clicker.
 */
import type { ClickOrigin } from '../../src/gateway/types.js';
import type { UserQuestionPrompt } from '../../src/gateway/types.js';

export const ASK_BUTTON_PREFIX = 'warden-ask:';
export const ASK_OTHER_PREFIX = 'warden-ask-other:';
export const ASK_MODAL_PREFIX = 'warden-ask-modal:';
/** The form's text input id. */
export const ASK_FIELD = 'answer';
/** Free-text answers stay short enough for a follow-up and a button-less summary. */
export const ASK_MAX_CHARS = 1000;

export type AskButton = { id: string; question: number; option: number };

/** What an adapter asks the app about a click or a form; `text` is shown privately to the clicker. */
export interface UserQuestionHandlers {
  /** An option's button: records the answer when this user may give it. `summary` replaces the buttons. */
  choose(click: { id: string; question: number; option: number; userId: string; origin: ClickOrigin | undefined }): Promise<{ ok: true; text: string; summary: string } | { ok: false; text: string }>;
  /** The "Other…" button: may this user type an answer now? */
  open(click: { id: string; question: number; userId: string; origin: ClickOrigin | undefined }): Promise<{ ok: true; title: string } | { ok: false; text: string }>;
  /** The form's submission. */
  submit(submission: { id: string; question: number; userId: string; origin: ClickOrigin | undefined; value: string }): Promise<{ ok: true; text: string; summary: string } | { ok: false; text: string }>;
}

export const askButtonId = (id: string, question: number, option: number) => `${ASK_BUTTON_PREFIX}${id}:${question}:${option}`;
export const askOtherId = (id: string, question: number) => `${ASK_OTHER_PREFIX}${id}:${question}`;
export const askModalId = (id: string, question: number) => `${ASK_MODAL_PREFIX}${id}:${question}`;

const ID = /^[A-Za-z0-9-]{8,64}$/;
const DIGIT = /^[0-9]$/;

/** A button or form id of ours, decoded; undefined for anything else (forged or foreign). */
export function decodeAskId(customId: string, prefix: string): AskButton | undefined {
  if (!customId.startsWith(prefix)) return undefined;
  const parts = customId.slice(prefix.length).split(':');
  const [id, q, o] = parts;
  if (id === undefined || !ID.test(id) || q === undefined || !DIGIT.test(q)) return undefined;
  if (prefix === ASK_BUTTON_PREFIX) return parts.length === 3 && o !== undefined && DIGIT.test(o) ? { id, question: Number(q), option: Number(o) } : undefined;
  return parts.length === 2 ? { id, question: Number(q), option: -1 } : undefined;
}

/** One question's words, the same on every platform (`mention` names the person asked). */
export function askQuestionText(prompt: UserQuestionPrompt, index: number, mention: string): string {
  const q = prompt.questions[index]!;
  const count = prompt.questions.length > 1 ? ` (${index + 1}/${prompt.questions.length})` : '';
  const described = q.options.filter((o) => o.description).map((o) => `• ${o.label}: ${o.description}`);
  return [`${mention}, the assistant asks${count} — ${q.header}: ${q.question}`, ...described].join('\n');
}
