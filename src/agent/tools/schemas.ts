// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
export const DEFAULT_TIMEOUT_S = 120;

export const MAX_PAGE = 25;

export const sessionStatusParameters = { type: 'object', properties: {}, additionalProperties: false } as const;

export const agentsListParameters = { type: 'object', properties: {}, additionalProperties: false } as const;

export const sessionsSpawnParameters = {
  type: 'object',
  properties: {
    task: { type: 'string', minLength: 1, description: 'What the subagent should do, with everything it needs to know.' },
    label: { type: 'string', description: 'A short name to recognise the run by.' },
    agentId: { type: 'string', description: 'Another agent to run it (see agents_list); default this agent.' },
  },
  required: ['task'],
  additionalProperties: false,
} as const;

export const sessionsYieldParameters = { type: 'object', properties: {}, additionalProperties: false } as const;

export const subagentsParameters = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['list', 'steer', 'kill'] },
    runId: { type: 'string', description: 'The run to steer or kill.' },
    message: { type: 'string', description: 'For steer: the follow-up instruction.' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;

export const sessionsListParameters = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1, maximum: 100, description: 'How many sessions to list (default 20).' } },
  additionalProperties: false,
} as const;

export const sessionsHistoryParameters = {
  type: 'object',
  properties: {
    sessionKey: { type: 'string', description: 'A session key from sessions_list.' },
    limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Entries to return (default 20), newest last.' },
    beforeSeq: { type: 'integer', minimum: 1, description: 'Return entries before this seq (paging back).' },
  },
  required: ['sessionKey'],
  additionalProperties: false,
} as const;

export const sessionsSearchParameters = {
  type: 'object',
  properties: {
    query: { type: 'string', description: 'Words to find (every word must occur); punctuation and operators are ignored.' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, description: 'Results per page (default 10).' },
    cursor: { type: 'string', description: 'nextCursor from the previous page of the same query.' },
  },
  required: ['query'],
  additionalProperties: false,
} as const;

export const sessionsSendParameters = {
  type: 'object',
  properties: {
    sessionKey: { type: 'string', description: 'Target session key (from sessions_list).' },
    message: { type: 'string', minLength: 1, description: 'What to send.' },
    timeoutSeconds: { type: 'integer', minimum: 1, maximum: 600, description: `How long to wait for the reply (default ${DEFAULT_TIMEOUT_S}).` },
  },
  required: ['sessionKey', 'message'],
  additionalProperties: false,
} as const;
