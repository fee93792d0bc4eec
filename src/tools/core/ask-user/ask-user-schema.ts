// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
const optionSchema = {
  type: 'object',
  properties: { label: { type: 'string', minLength: 1, maxLength: 80 }, description: { type: 'string', maxLength: 100 } },
  required: ['label'],
  additionalProperties: false,
} as const;

export const askUserParameters = {
  type: 'object',
  properties: {
    questions: {
      type: 'array',
      minItems: 1,
      maxItems: 3,
      description: 'Ask exactly one question unless several answers must come together.',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', maxLength: 32, description: 'Unique snake_case answer key.' },
          header: { type: 'string', minLength: 1, maxLength: 12, description: 'Short label.' },
          question: { type: 'string', minLength: 1, maxLength: 300, description: 'One sentence.' },
          options: { type: 'array', minItems: 2, maxItems: 5, items: optionSchema, description: 'Every choice; recommended first, suffixed "(Recommended)". No "Other": free text is added automatically. Labels ≤ 75 characters on Slack, 80 elsewhere.' },
          multiSelect: { type: 'boolean', description: 'Not supported here: leave it out.' },
        },
        required: ['id', 'header', 'question', 'options'],
        additionalProperties: false,
      },
    },
    timeoutSeconds: { type: 'integer', description: 'How long the person may answer; default 900, clamped to 30-3600.' },
  },
  required: ['questions'],
  additionalProperties: false,
} as const;
