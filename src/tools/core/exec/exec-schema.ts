// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
export const execParameters = {
  type: 'object',
  properties: {
    command: { type: 'string', minLength: 1, description: 'Shell command to run (pipelines and && / || / ; chains).' },
    workdir: { type: 'string', description: 'Working directory inside the workspace (default: the workspace).' },
    env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Extra environment variables.' },
    yieldMs: { type: 'integer', minimum: 0, description: 'Return after this many ms and keep the command running in the background.' },
    background: { type: 'boolean', description: 'Start in the background right away; follow it with the process tool.' },
    timeout: { type: 'number', description: 'Kill the command after this many seconds (0 = no limit).' },
    elevated: {
      type: 'boolean',
      description: 'Run outside the sandbox on the gateway host. Only for senders the operator named in tools.elevated; always asks an approver.',
    },
  },
  required: ['command'],
  additionalProperties: false,
} as const;
