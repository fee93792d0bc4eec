import { statfs } from 'node:fs/promises';
import os from 'node:os';
import { NODE_COMMANDS, type NodeCommand } from '../../nodes/protocol.js';
import type { NodeHub } from '../../nodes/hub.js';
import type { ToolCallContext, ToolImplementation, ToolResult } from '../../../tools/types.js';
import { nodesParameters as parameters } from './nodes-schema.js';

export interface NodesArgs {
  action: 'list' | 'status' | 'describe' | 'invoke';
  node?: string;
  command?: NodeCommand;
  args?: Record<string, unknown>;
}

const fail = (message: string): ToolResult => ({ content: [{ type: 'text', text: message }], details: { status: 'error', error: message }, isError: true });
const ok = (value: unknown): ToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], details: value });

const gib = (bytes: number) => Math.round((bytes / 1024 ** 3) * 10) / 10;

const localNode = () => ({ id: 'local', hostname: os.hostname(), platform: `${os.platform()}/${os.arch()}`, release: os.release() });

/**
 * nodes (owner-only): the machines Warden acts on — the host it runs on (`local`, status read
 * from the OS) and the nodes paired with `warden node`. A paired node runs `system.run` under
 * its own exec policy and approvals; an offline one is listed as such and its calls fail.
 */
export function createNodesTool(deps: { hub?: (() => NodeHub | undefined) | undefined } = {}): ToolImplementation<NodesArgs> {
  return {
    id: 'nodes',
    parameters,
    async execute(args, ctx: ToolCallContext) {
      if (!ctx.turn.senderIsOwner) return fail('nodes is owner-only.');
      const hub = deps.hub?.();
      const name = args.node ?? 'local';
      switch (args.action) {
        case 'list': {
          const local = localNode();
          if (!hub) return { content: [{ type: 'text', text: JSON.stringify([local], null, 2) }], details: { nodes: [local] } };
          const nodes = [{ ...local, online: true }, ...(await hub.list()).map((n) => ({ id: n.name, ...n }))];
          return ok({ nodes, pairing: hub.pending().map((p) => ({ name: p.name, code: p.code })) });
        }
        case 'describe': {
          if (name === 'local') return ok({ ...localNode(), online: true, commands: ['status'] });
          const node = await hub?.describe(name);
          return node ? ok(node) : fail(await unknown(name, hub));
        }
        case 'invoke': {
          if (name === 'local') return fail('"local" runs commands through exec; invoke is for paired nodes');
          if (!hub) return fail('no node listener runs here (gateway.nodes.enabled)');
          if (!args.command) return fail(`invoke needs "command": one of ${NODE_COMMANDS.join(', ')}`);
          if (!(await hub.describe(name))) return fail(await unknown(name, hub));
          return hub.invoke(name, args.command, args.args ?? {}, { approvals: ctx.approvals, signal: ctx.signal, actor: `${ctx.turn.provider}:${ctx.turn.senderId ?? ''}` });
        }
        case 'status': {
          if (name !== 'local') return fail(hub ? `status reads the host Warden runs on; for node ${name} use describe, or invoke system.run` : `unknown node "${name}": this build knows only "local"`);
          let disk: { freeGiB: number; totalGiB: number } | undefined;
          try {
            const fs = await statfs(ctx.workspaceDir || process.cwd());
            disk = { freeGiB: gib(fs.bavail * fs.bsize), totalGiB: gib(fs.blocks * fs.bsize) };
          } catch {
            disk = undefined;
          }
          return ok({
            ...localNode(),
            cpus: os.cpus().length,
            loadAvg: os.loadavg().map((l) => Math.round(l * 100) / 100),
            memory: { freeGiB: gib(os.freemem()), totalGiB: gib(os.totalmem()) },
            disk,
            uptimeSec: Math.round(os.uptime()),
          });
        }
      }
      return fail(`unknown action "${String(args.action)}"`);
    },
  };
}

async function unknown(name: string, hub: NodeHub | undefined): Promise<string> {
  const known = (await hub?.list())?.map((n) => n.name) ?? [];
  return `unknown node "${name}"; known: local${known.length ? `, ${known.join(', ')}` : ''}`;
}
