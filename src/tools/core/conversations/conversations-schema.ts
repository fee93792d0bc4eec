// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
export const DEFAULT_TURN_TIMEOUT_SEC = 600;

export const MAX_TURN_TIMEOUT_SEC = 3_600;

export const LIST_DEFAULT = 50;

export const LIST_MAX = 200;

export const TARGET_PROPERTIES = {
  provider: { type: 'string', enum: ['discord', 'slack'], description: 'Platform of the conversation.' },
  channel: { type: 'string', pattern: '^[A-Za-z0-9]+$', description: 'Exact channel id (from conversations_list).' },
  threadId: { type: 'string', pattern: '^[A-Za-z0-9.]+$', description: 'A thread of that channel.' },
  userId: { type: 'string', pattern: '^[A-Za-z0-9]+$', description: 'A user id: the conversation is the DM with them.' },
} as const;

export const conversationsListParameters = {
  type: 'object',
  properties: {
    provider: TARGET_PROPERTIES.provider,
    limit: { type: 'integer', minimum: 1, maximum: LIST_MAX, description: `How many at most (default ${LIST_DEFAULT}).` },
    cursor: { type: 'string', maxLength: 1024, description: 'The nextCursor of the previous page.' },
  },
  additionalProperties: false,
} as const;

export const conversationsSendParameters = {
  type: 'object',
  properties: { ...TARGET_PROPERTIES, text: { type: 'string', minLength: 1, maxLength: 4000, description: 'The message to post.' } },
  required: ['provider', 'text'],
  additionalProperties: false,
} as const;

export const conversationsTurnParameters = {
  type: 'object',
  properties: {
    ...TARGET_PROPERTIES,
    text: { type: 'string', minLength: 1, maxLength: 4000, description: 'The message to post there.' },
    timeoutSeconds: { type: 'integer', minimum: 10, maximum: MAX_TURN_TIMEOUT_SEC, description: `How long to wait for a reply (default ${DEFAULT_TURN_TIMEOUT_SEC}).` },
  },
  required: ['provider', 'text'],
  additionalProperties: false,
} as const;
