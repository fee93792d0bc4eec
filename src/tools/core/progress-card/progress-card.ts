import type { ToolImplementation, ToolResult } from '../../types.js';
import { progressCardParameters, MAX_STEPS, STEP_STATUSES, FINAL_STATES } from './progress-card-schema.js';
import type { ProgressCardArgs, ProgressCardService } from './view.js';

export { FINAL_STATES, MAX_STEPS, STEP_STATUSES };
export { nextView, renderCard, type CardView, type FinalState, type ProgressCardArgs, type ProgressCardService, type StepStatus } from './view.js';

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
