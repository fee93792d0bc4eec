// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
import { NODE_COMMANDS } from '../../nodes/protocol.js';
export const nodesParameters = {
  type: 'object',
  properties: {
    action: {
      type: 'string',
      enum: ['list', 'describe', 'invoke', 'status'],
      description: 'list: the host Warden runs on ("local") and the paired nodes, online or not; describe: one node, its commands and skills; invoke: run a command on a paired node; status: load, memory and disk of "local".',
    },
    node: { type: 'string', description: 'Node name (default "local" for status and describe).' },
    command: { type: 'string', enum: [...NODE_COMMANDS], description: 'For invoke: system.run {command}, system.which {name}, system.notify {message, title?}.' },
    args: { type: 'object', description: 'For invoke: the command\'s arguments, e.g. {"command": "uptime"} for system.run.' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;
