// What a progress card shows and how it reads: the running Warden's card service renders it
// without loading the tool (its implementation and argument schema load at the tool's first call).
import type { TurnContext } from '../../../policy/context.js';
import type { FINAL_STATES, STEP_STATUSES } from './progress-card-schema.js';

export type StepStatus = (typeof STEP_STATUSES)[number];
export type FinalState = (typeof FINAL_STATES)[number];

export interface ProgressCardArgs {
  title?: string;
  steps?: Array<{ text: string; status: StepStatus }>;
  note?: string;
  /** Closes the card with this state; later calls start a new card. */
  final?: FinalState;
}

/** What the card shows, as the platform's plain text (Markdown both adapters render). */
export interface CardView {
  title: string;
  steps: Array<{ text: string; status: StepStatus }>;
  note?: string | undefined;
  final?: FinalState | undefined;
}

const MARK: Readonly<Record<StepStatus, string>> = { pending: '▫️', in_progress: '⏳', done: '✅', failed: '❌', skipped: '⏭️' };
const FINAL_LINE: Readonly<Record<FinalState, string>> = { done: '✅ Done', failed: '❌ Failed', cancelled: '⏹️ Cancelled' };
const MAX_LINE = 200;

const line = (text: string): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_LINE ? `${flat.slice(0, MAX_LINE - 1)}…` : flat;
};

/** The card after `update`: what it omits stays as `previous` showed it (a closed card starts anew). */
export function nextView(previous: CardView | undefined, update: ProgressCardArgs): CardView {
  const base = previous && !previous.final ? previous : undefined;
  return { title: update.title ?? base?.title ?? 'Progress', steps: update.steps ?? base?.steps ?? [], note: update.note, final: update.final };
}

/** The card's text: a bold title, one line per step with its mark, an optional note, the final state. */
export function renderCard(view: CardView): string {
  const lines = [`**${line(view.title)}**`];
  for (const step of view.steps) lines.push(`${MARK[step.status]} ${line(step.text)}`);
  if (view.note !== undefined && view.note.trim() !== '') lines.push(`_${line(view.note)}_`);
  if (view.final) lines.push(FINAL_LINE[view.final]);
  return lines.join('\n');
}

/** Where the running Warden keeps a session's open card; absent outside `warden start`. */
export interface ProgressCardService {
  /** Shows `view` on the session's open card (posting it on first use), throttled to the platform's edit rate. */
  show(input: { sessionKey: string; turn: TurnContext; update: ProgressCardArgs }): Promise<{ ok: true; state: 'open' | 'closed'; messageId?: string | undefined } | { ok: false; error: string }>;
}
