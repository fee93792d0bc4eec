// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
export const secretsParameters = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['list', 'request', 'delete'], description: 'list: names of stored secrets; request: ask the person privately for one; delete: remove one.' },
    name: { type: 'string', pattern: '^[A-Z_][A-Z0-9_]{0,63}$', description: 'The secret\'s name, an environment variable name such as STRIPE_API_KEY.' },
    reason: { type: 'string', minLength: 1, maxLength: 300, description: 'request: why it is needed, shown to the person on the prompt.' },
    scope: { type: 'string', enum: ['agent', 'conversation'], description: 'request/delete: for this agent everywhere (default) or only this conversation.' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;
