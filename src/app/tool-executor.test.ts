import { afterEach, describe, expect, it } from 'vitest';
import { HookBus } from '../hooks/bus.js';
import type { TurnContext } from '../policy/context.js';
import { testExecutor } from './testing.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const NOTES = { 'notes.txt': 'hello from the workspace\n' };
const cleanup = (close: () => void | Promise<void>) => cleanups.push(close);

async function setup(raw: object, hooks?: HookBus) {
  return (await testExecutor(raw, { cleanup, hooks, files: NOTES })).executor;
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
    const executor = await setup({ tools: { profile: 'coding' } });
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
    const executor = await setup({ tools: { profile: 'coding' } });
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
    const executor = await setup({ tools: { profile: 'coding', exec: { host: 'gateway' } } }, hooks);
    const surface = await executor.surface(turn(), 'agent:main:discord:channel:2');
    expect(surface.ok && surface.tools.map((t) => t.id).sort()).toEqual(['exec', 'process', 'read']);
    // The hook saw the surface before its restriction; the turn's calls carry the restriction on.
    expect(seen[0]).toEqual(expect.arrayContaining(['read', 'write', 'exec']));
    expect(surface.ok && surface.turn?.toolsAllow).toEqual([['read', 'exec']]);
    expect(executor.report(surface.ok ? surface.turn! : turn()).removed).toContainEqual({ tool: 'write', by: 'before_prompt_build toolsAllow' });
  });

  it('counts loops per run: calls with the same run add up, calls without one (a person’s command) never do', async () => {
    const executor = await setup({ tools: { profile: 'coding' } });
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
    const executor = await setup({ tools: { allow: ['no_such_tool'] } });
    const surface = await executor.surface(turn());
    expect(surface.ok).toBe(false);
  });
});

describe('the executor of a reloaded config', () => {
  it('takes over only the implementations it is told to (the browser), and builds the rest again', async () => {
    const before = await setup({});
    const after = await setup({});
    const [browser, exec] = await Promise.all([before.resolveTool('browser'), before.resolveTool('exec')]);
    after.adopt(before, ['browser']);
    expect(await after.resolveTool('browser')).toBe(browser);
    expect(await after.resolveTool('exec')).not.toBe(exec);
  });
});

describe('GovernedToolExecutor: a deferred call resumed once decided', () => {
  function deferring(raw: object, hooks?: HookBus) {
    return testExecutor({ owners: { discord: ['olga'] }, approvals: { waitSec: 0 }, ...raw }, { cleanup, hooks, files: NOTES, prefix: 'warden-executor-deferred-' });
  }

  it('a hook-raised approval defers the call; resumed, it runs under the original turn with the decision, without a new card', async () => {
    const hooks = new HookBus();
    hooks.on('before_tool_call', () => ({ requireApproval: { title: 'Read a file', description: 'The audit plugin wants a look' } }), { toolMatcher: ['read'] });
    const { executor, approvals } = await deferring({ tools: { profile: 'coding' } }, hooks);
    const asking = turn({ senderId: 'alice', senderName: 'Alice' });
    const surface = (await executor.surface(asking)) as { ok: true; tools: Array<{ id: string }> };
    const pending = await executor.execute(
      { toolCallId: 'c1', tool: 'read', args: { path: 'notes.txt' } },
      { sessionKey: 'agent:main:discord:channel:2', turn: asking, signal: new AbortController().signal, surface: surface.tools.map((t) => t.id), deferApprovals: true },
    );
    const id = (pending.details as { approvalId: string }).approvalId;
    expect(await approvals.get(id)).toMatchObject({ kind: 'tool', tool: 'read', via: 'agent', requesterId: 'alice', requesterName: 'Alice', status: 'pending' });
    await approvals.resolve(id, 'allow-once', { provider: 'discord', userId: 'olga', via: { kind: 'typed' } });

    let asked = 0;
    const off = approvals.registerRenderer({ provider: 'discord', show: async () => void asked++, update: async () => {} });
    const call = (await approvals.deferred.get(id))!;
    const result = await executor.resume(call, call.turn, new AbortController().signal);
    off();
    expect(result.isError).toBe(false);
    expect(JSON.stringify(result.content)).toContain('hello from the workspace');
    expect(asked).toBe(0);
  });

  it('resumed where the tool is no longer on the surface (the policy changed), the call is refused with the step that removed it', async () => {
    const { executor, approvals } = await deferring({ tools: { profile: 'coding' } });
    const asking = turn({ channelName: 'dev' });
    const surface = (await executor.surface(asking)) as { ok: true; tools: Array<{ id: string }> };
    const pending = await executor.execute(
      { toolCallId: 'c2', tool: 'exec', args: { command: 'touch x' } },
      { sessionKey: 'agent:main:discord:channel:2', turn: asking, signal: new AbortController().signal, surface: surface.tools.map((t) => t.id), deferApprovals: true },
    );
    const id = (pending.details as { approvalId: string }).approvalId;
    await approvals.resolve(id, 'allow-once', { provider: 'discord', userId: 'olga', via: { kind: 'typed' } });
    const later = await deferring({ tools: { profile: 'coding', deny: ['exec'] } });
    const call = (await approvals.deferred.get(id))!;
    const refused = await later.executor.resume(call, call.turn, new AbortController().signal);
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('Tool exec is not available in this turn (removed by tools.deny)');
  });

  it('the rebuilt context keeps the original surface as its ceiling: a tool the original turn lacked stays off', async () => {
    const { executor, config } = await deferring({ tools: { profile: 'full' } });
    const { contextForDeferredCall } = await import('../turn/turn-context.js');
    const rebuilt = contextForDeferredCall(config, { agentId: 'main', turn: turn(), surface: ['read', 'exec'] });
    const surface = (await executor.surface(rebuilt)) as { ok: true; tools: Array<{ id: string }> };
    expect(surface.tools.map((t) => t.id).sort()).toEqual(['exec', 'read']);
  });
});
