import { statfs } from 'node:fs/promises';
import os from 'node:os';
import type { ToolCallContext, ToolImplementation, ToolResult } from '../../types.js';

export interface NodesArgs {
  action: 'list' | 'status';
  node?: string;
}

const parameters = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['list', 'status'], description: 'list: the nodes Warden can act on; status: load, memory, disk and uptime of one node.' },
    node: { type: 'string', description: 'Node id for status (default "local", the host Warden runs on).' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;

const fail = (message: string): ToolResult => ({ content: [{ type: 'text', text: message }], details: { status: 'error', error: message }, isError: true });

const gib = (bytes: number) => Math.round((bytes / 1024 ** 3) * 10) / 10;

/**
 * nodes (owner-only): the machines Warden acts on. This build has one node, the host it runs
 * on (`local`); its status is read live from the operating system.
 */
export function createNodesTool(): ToolImplementation<NodesArgs> {
  return {
    id: 'nodes',
    parameters,
    async execute(args, ctx: ToolCallContext) {
      if (!ctx.turn.senderIsOwner) return fail('nodes is owner-only.');
      const local = { id: 'local', hostname: os.hostname(), platform: `${os.platform()}/${os.arch()}`, release: os.release() };
      if (args.action === 'list') return { content: [{ type: 'text', text: JSON.stringify([local], null, 2) }], details: { nodes: [local] } };
      if ((args.node ?? 'local') !== 'local') return fail(`unknown node "${args.node}": this build knows only "local"`);
      let disk: { freeGiB: number; totalGiB: number } | undefined;
      try {
        const fs = await statfs(ctx.workspaceDir || process.cwd());
        disk = { freeGiB: gib(fs.bavail * fs.bsize), totalGiB: gib(fs.blocks * fs.bsize) };
      } catch {
        disk = undefined;
      }
      const status = {
        ...local,
        cpus: os.cpus().length,
        loadAvg: os.loadavg().map((l) => Math.round(l * 100) / 100),
        memory: { freeGiB: gib(os.freemem()), totalGiB: gib(os.totalmem()) },
        disk,
        uptimeSec: Math.round(os.uptime()),
      };
      return { content: [{ type: 'text', text: JSON.stringify(status, null, 2) }], details: status };
    },
  };
}
