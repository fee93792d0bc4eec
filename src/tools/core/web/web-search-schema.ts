// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
export const webSearchParameters = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 400, description: 'What to search the web for.' },
    count: { type: 'integer', minimum: 1, maximum: 20, description: 'How many results (default from the config, usually 5). Answer-style providers return one answer with sources.' },
  },
  required: ['query'],
  additionalProperties: false,
} as const;
