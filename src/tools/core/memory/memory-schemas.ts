// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
export const DEFAULT_RESULTS = 6;

export const MAX_RESULTS = 20;

export const memorySearchParameters = {
  type: 'object',
  additionalProperties: false,
  required: ['query'],
  properties: {
    query: {
      type: 'string',
      description: 'Words to look for in the agent\'s memory notes (MEMORY.md and memory/*.md). Results are ranked by relevance; any of the words may match.',
    },
    maxResults: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_RESULTS,
      description: `How many results to return (default ${DEFAULT_RESULTS}, at most ${MAX_RESULTS}).`,
    },
  },
} as const;

export const memoryGetParameters = {
  type: 'object',
  additionalProperties: false,
  required: ['path'],
  properties: {
    path: { type: 'string', description: 'Memory file to read: MEMORY.md or a file under memory/ (as memory_search returns it).' },
    from: { type: 'integer', minimum: 1, description: 'First line to return (1-based). Default 1.' },
    lines: { type: 'integer', minimum: 1, description: 'Number of lines to return. Default: as many as fit in one page.' },
  },
} as const;
