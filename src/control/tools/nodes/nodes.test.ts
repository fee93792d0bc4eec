import os from 'node:os';
import { describe, expect, it } from 'vitest';
import type { ToolCallContext, ToolResult } from '../../../tools/types.js';
import { createNodesTool, type NodesArgs } from './nodes.js';

const tool = createNodesTool();
const call = (args: NodesArgs, owner = true) =>
  tool.execute(args, { turn: { senderIsOwner: owner }, workspaceDir: os.tmpdir() } as ToolCallContext) as Promise<ToolResult>;

describe('the nodes tool', () => {
  it('refuses a non-owner', async () => {
    expect((await call({ action: 'list' }, false)).isError).toBe(true);
  });

  it('lists the local node and reads its status from the OS', async () => {
    expect((await call({ action: 'list' })).details).toEqual({ nodes: [expect.objectContaining({ id: 'local', hostname: os.hostname() })] });
    const status = (await call({ action: 'status' })).details as { cpus: number; memory: { totalGiB: number }; disk?: { totalGiB: number } };
    expect(status.cpus).toBe(os.cpus().length);
    expect(status.memory.totalGiB).toBeGreaterThan(0);
    expect(status.disk?.totalGiB).toBeGreaterThan(0);
  });

  it('names the nodes it knows when asked for another', async () => {
    const result = await call({ action: 'status', node: 'laptop' });
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toBe('unknown node "laptop": this build knows only "local"');
  });
});
