// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
export const GATEWAY_ACTIONS = ['status', 'config.get', 'config.schema', 'config.schema.lookup', 'config.patch', 'reload', 'restart'] as const;

export const gatewayParameters = {
  type: 'object',
  properties: {
    action: {
      type: 'string',
      enum: [...GATEWAY_ACTIONS],
      description:
        'status: adapters, uptime, config version; config.get: the effective config, secrets redacted; config.schema (OpenClaw: config.schema.lookup): keys and types under path; ' +
        'config.patch: apply a JSON merge patch to the config file (validated, comments kept; a change that widens security waits for another owner); ' +
        'reload: read the config file again; restart: stop gracefully and start again.',
    },
    path: { type: 'string', description: 'For config.get and config.schema: a dotted path such as "tools.exec" or "channels.discord.guilds".' },
    patch: { type: 'object', description: 'For config.patch: e.g. {"channels":{"discord":{"guilds":{"111":{"channels":{"general":{"tools":{"deny":["exec"]}}}}}}}}. null removes a key; arrays replace.' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;
