// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
export const ACTIONS = ['list', 'poll', 'log', 'write', 'send-keys', 'submit', 'paste', 'kill', 'clear', 'remove'] as const;

export const processParameters = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ACTIONS, description: 'What to do with a background job started by exec.' },
    sessionId: { type: 'string', description: 'Job id from exec (every action but list).' },
    data: { type: 'string', description: 'write: text for stdin.' },
    eof: { type: 'boolean', description: 'write: close stdin afterwards.' },
    keys: { type: 'array', items: { type: 'string' }, description: 'send-keys: named keys (enter, tab, escape, up, ^C, …).' },
    hex: { type: 'array', items: { type: 'string' }, description: 'send-keys: raw bytes as hex.' },
    literal: { type: 'string', description: 'send-keys: literal text sent first.' },
    text: { type: 'string', description: 'paste: text to paste.' },
    bracketed: { type: 'boolean', description: 'paste: wrap in bracketed-paste markers (default true).' },
    offset: { type: 'integer', minimum: 0, description: 'log: first line (0-based).' },
    limit: { type: 'integer', minimum: 1, description: 'log: number of lines.' },
    timeout: { type: 'integer', minimum: 0, maximum: 30000, description: 'poll: wait up to this many ms for the job to finish.' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;
