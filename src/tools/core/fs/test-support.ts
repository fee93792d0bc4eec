// Shared by the fs and memory tool tests: a real temp workspace and a call context.
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { log } from '../../../log/log.js';
import type { ToolCallContext, ToolImplementation, ToolResult } from '../../types.js';

export interface TempWorkspace {
  /** A directory holding `ws/` (the workspace) and `outside/` (a sibling it must not reach). */
  base: string;
  ws: string;
  outside: string;
  cleanup(): Promise<void>;
}

export async function makeTempWorkspace(): Promise<TempWorkspace> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'warden-fs-')));
  const { mkdir } = await import('node:fs/promises');
  const ws = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  await mkdir(ws);
  await mkdir(outside);
  return { base, ws, outside, cleanup: () => rm(base, { recursive: true, force: true }) };
}

export function callContext(workspaceDir: string): ToolCallContext {
  return {
    toolCallId: 'call-1',
    signal: new AbortController().signal,
    turn: { agentId: 'main', provider: 'web', chat: 'dm', senderIsOwner: true, spawnDepth: 0 },
    sessionKey: 'agent:main:web:dm:test',
    workspaceDir,
    log,
    approvals: {
      request: () => Promise.reject(new Error('file tools never ask for approval')),
    },
  };
}

/** Runs a tool and returns its normalised result. */
export async function run<A>(tool: ToolImplementation<A>, args: A, workspaceDir: string): Promise<ToolResult> {
  return (await tool.execute(args, callContext(workspaceDir))) as ToolResult;
}

export function textOf(result: ToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : `[image ${c.mimeType}]`)).join('\n');
}
