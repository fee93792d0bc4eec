import type { ToolImplementation, ToolResult } from '../../types.js';
import type { TurnContext } from '../../../policy/context.js';
import { progressCardParameters, MAX_STEPS, STEP_STATUSES, FINAL_STATES } from './progress-card-schema.js';

export { FINAL_STATES, MAX_STEPS, STEP_STATUSES };

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

/**
 * `progress_card`: one status message in this conversation, updated in place while a long task
 * runs (each call replaces what it shows; edits are throttled like a streamed reply, so many
 * quick calls land as few edits), closed with `final`. The card belongs to the session; after a
 * restart the next call edits the same message.
 */
export function createProgressCardTool(service: () => ProgressCardService | undefined): ToolImplementation<ProgressCardArgs> {
  return {
    id: 'progress_card',
    parameters: progressCardParameters,
    async execute(args, ctx): Promise<ToolResult> {
      const cards = service();
      if (!cards) return { content: [{ type: 'text', text: 'progress_card: no chat platform runs here to show a card' }], isError: true };
      const shown = await cards.show({ sessionKey: ctx.sessionKey, turn: ctx.turn, update: args });
      if (!shown.ok) return { content: [{ type: 'text', text: `progress_card: ${shown.error}` }], isError: true, details: { status: 'error', error: shown.error } };
      const text = shown.state === 'closed' ? `Card closed (${args.final}).` : 'Card updated; call again as the task moves on, and with final when it ends.';
      return { content: [{ type: 'text', text }], details: { state: shown.state, messageId: shown.messageId } };
    },
  };
}
