// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
export const readParameters = {
  type: 'object',
  additionalProperties: false,
  required: ['path'],
  properties: {
    path: {
      type: 'string',
      description: 'File to read, relative to the workspace (absolute paths must be inside the workspace).',
    },
    offset: {
      type: 'integer',
      minimum: 1,
      description: 'Line number to start from (1-based). Use the offset given in the previous page\'s notice to continue.',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      description: 'Maximum number of lines to return (at most 2000; long pages also stop at a size limit).',
    },
  },
} as const;

export const writeParameters = {
  type: 'object',
  additionalProperties: false,
  required: ['path', 'content'],
  properties: {
    path: {
      type: 'string',
      description: 'File to create or overwrite, relative to the workspace. Missing parent directories are created.',
    },
    content: {
      type: 'string',
      description: 'The complete new content of the file (replaces everything). To change part of a file use edit instead.',
    },
  },
} as const;

const editItem = {
  type: 'object',
  additionalProperties: false,
  required: ['oldText', 'newText'],
  properties: {
    oldText: {
      type: 'string',
      description: 'Exact text to find, copied from the file without read\'s line-number prefixes. Must occur exactly once unless replaceAll is true.',
    },
    newText: { type: 'string', description: 'Text that replaces oldText (may be empty to delete it).' },
    replaceAll: { type: 'boolean', description: 'Replace every occurrence of oldText instead of requiring a unique one. Default false.' },
  },
} as const;

export const editParameters = {
  type: 'object',
  additionalProperties: false,
  required: ['path'],
  properties: {
    path: { type: 'string', description: 'File to edit, relative to the workspace.' },
    edits: {
      type: 'array',
      minItems: 1,
      items: editItem,
      description: 'Replacements, each matched against the file as it was before this call; they must not overlap.',
    },
    oldText: { type: 'string', description: 'Shorthand for a single edit: the exact text to find (use edits for several).' },
    newText: { type: 'string', description: 'Shorthand for a single edit: the replacement text.' },
    replaceAll: { type: 'boolean', description: 'With oldText/newText: replace every occurrence.' },
  },
} as const;

export const applyPatchParameters = {
  type: 'object',
  additionalProperties: false,
  required: ['input'],
  properties: {
    input: {
      type: 'string',
      description: [
        'The whole patch, from "*** Begin Patch" to "*** End Patch". Sections:',
        '"*** Add File: <path>" followed by the new file\'s lines, each prefixed with "+";',
        '"*** Delete File: <path>";',
        '"*** Update File: <path>", optionally "*** Move to: <new path>", then changes: an "@@" line',
        '(optionally "@@ <a line just above the change>") followed by lines starting with " " (unchanged context),',
        '"-" (removed) or "+" (added); "*** End of File" after a change anchors it at the end of the file.',
        'Paths are relative to the workspace. If any part fails, no file is changed.',
      ].join(' '),
    },
  },
} as const;
