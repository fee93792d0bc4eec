import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalService } from '../approvals/service.js';
import { parseConfig } from '../config/index.js';
import { EventBus } from '../events.js';
import { HookBus } from '../hooks/bus.js';
import type { TurnContext } from '../policy/context.js';
import { openStore } from '../store/index.js';
import { GovernedToolExecutor } from './tool-executor.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function setup(raw: object, hooks?: HookBus) {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-executor-'));
  mkdirSync(path.join(dir, 'workspace'));
  writeFileSync(path.join(dir, 'workspace', 'notes.txt'), 'hello from the workspace\n');
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), ...raw });
  if (!parsed.ok) throw parsed.error;
  const { config } = parsed.value;
  const opened = openStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const events = new EventBus();
  const approvals = new ApprovalService({ store: opened.store, config, events });
  cleanups.push(() => opened.store.close(), () => approvals.shutdown());
  return new GovernedToolExecutor(config, { config, baseDir: dir, store: opened.store }, { approvals, events, hooks });
}

const turn = (over: Partial<TurnContext> = {}): TurnContext => ({
  agentId: 'main',
  provider: 'discord',
  chat: 'channel',
  guildId: '1',
  channelId: '2',
  channelName: 'general',
  senderId: 'u',
  senderIsOwner: false,
  spawnDepth: 0,
  ...over,
});

describe('GovernedToolExecutor', () => {
  it('offers the policy surface with each tool schema, and runs calls through the chain', async () => {
    const executor = setup({ tools: { profile: 'coding' } });
    const surface = await executor.surface(turn());
    expect(surface.ok).toBe(true);
    if (!surface.ok) return;
    const read = surface.tools.find((t) => t.id === 'read');
    expect(read?.parameters).toMatchObject({ type: 'object' });
    expect(surface.tools.map((t) => t.id)).not.toContain('cron');

    const result = await executor.execute(
      { toolCallId: 'c1', tool: 'read', args: { path: 'notes.txt' } },
      { sessionKey: 'agent:main:discord:channel:2', turn: turn(), signal: new AbortController().signal, surface: surface.tools.map((t) => t.id) },
    );
    expect(result.isError).toBe(false);
    expect(JSON.stringify(result.content)).toContain('hello from the workspace');
  });

  it('refuses a call to a tool outside the surface it was given', async () => {
    const executor = setup({ tools: { profile: 'coding' } });
    const result = await executor.execute(
      { toolCallId: 'c2', tool: 'read', args: { path: 'notes.txt' } },
      { sessionKey: 'k', turn: turn(), signal: new AbortController().signal, surface: ['write'] },
    );
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).not.toContain('hello from the workspace');
  });

  it('applies before_prompt_build toolsAllow to the surface, and hands the turn that carries it back', async () => {
    const hooks = new HookBus();
    const seen: string[][] = [];
    hooks.on('before_prompt_build', (event) => {
      seen.push(event.tools);
      return { toolsAllow: ['read', 'exec'] };
    });
    const executor = setup({ tools: { profile: 'coding', exec: { host: 'gateway' } } }, hooks);
    const surface = await executor.surface(turn(), 'agent:main:discord:channel:2');
    expect(surface.ok && surface.tools.map((t) => t.id).sort()).toEqual(['exec', 'process', 'read']);
    // The hook saw the surface before its restriction; the turn's calls carry the restriction on.
    expect(seen[0]).toEqual(expect.arrayContaining(['read', 'write', 'exec']));
    expect(surface.ok && surface.turn?.toolsAllow).toEqual([['read', 'exec']]);
    expect(executor.report(surface.ok ? surface.turn! : turn()).removed).toContainEqual({ tool: 'write', by: 'before_prompt_build toolsAllow' });
  });

  it('counts loops per run: calls with the same run add up, calls without one (a person’s command) never do', async () => {
    const executor = setup({ tools: { profile: 'coding' } });
    const call = (runId?: string) =>
      executor.execute(
        { toolCallId: `c-${Math.random()}`, tool: 'read', args: { path: 'notes.txt' } },
        { sessionKey: 'agent:main:discord:channel:2', turn: turn(), signal: new AbortController().signal, surface: ['read'], ...(runId ? { runId } : {}) },
      );
    for (let i = 0; i < 30; i++) expect((await call()).isError).toBe(false);
    for (let i = 0; i < 20; i++) expect((await call('run-1')).isError).toBe(false);
    expect(await call('run-1')).toMatchObject({ isError: true, details: { deniedReason: 'tool-loop', detector: 'generic_repeat' } });
    expect((await call('run-2')).isError).toBe(false);
    expect((await call()).isError).toBe(false);
  });

  it('reports the empty-allowlist guard as a failed surface', async () => {
    const executor = setup({ tools: { allow: ['no_such_tool'] } });
    const surface = await executor.surface(turn());
    expect(surface.ok).toBe(false);
  });
});
