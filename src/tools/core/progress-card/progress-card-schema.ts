// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
export const FINAL_STATES = ['done', 'failed', 'cancelled'] as const;

export const STEP_STATUSES = ['pending', 'in_progress', 'done', 'failed', 'skipped'] as const;

export const MAX_STEPS = 20;

export const progressCardParameters = {
  type: 'object',
  properties: {
    title: { type: 'string', maxLength: 200, description: 'What the task is (kept from the previous call when omitted).' },
    steps: {
      type: 'array',
      maxItems: MAX_STEPS,
      items: {
        type: 'object',
        properties: { text: { type: 'string', maxLength: 500 }, status: { type: 'string', enum: [...STEP_STATUSES] } },
        required: ['text', 'status'],
        additionalProperties: false,
      },
      description: 'The whole plan, each step with its status (replaces the previous list; kept when omitted).',
    },
    note: { type: 'string', maxLength: 500, description: 'One line under the steps (what is happening now).' },
    final: { type: 'string', enum: [...FINAL_STATES], description: 'Close the card with this state.' },
  },
  additionalProperties: false,
} as const;
