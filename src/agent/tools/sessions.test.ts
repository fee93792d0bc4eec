import { afterEach, describe, expect, it } from 'vitest';
import { createAgentRuntime, type WardenAgentRuntime } from '../runtime.js';
import type { SubagentRunView } from '../sessions.js';
import { channelTurn, createHarness, type Harness } from '../../app/agent-testing.js';
import type { ToolCallRequest, ToolCallScope, ToolExecutor, ToolSurface } from '../types.js';
import type { WardenConfigInput } from '../../config/index.js';
import { log } from '../../log/log.js';
import { createScriptedProvider, type ScriptedProvider } from '../../models/scripted.js';
import type { ModelRequest } from '../../models/types.js';
import type { TurnContext } from '../../policy/context.js';
import { resolveToolSurface } from '../../policy/surface.js';
import type { ToolImplementation, ToolResult } from '../../tools/types.js';
import { createSessionTools } from './index.js';
import { canReach } from './result.js';
import { withoutNonces } from '../../tools/untrusted-testing.js';

const PARENT = 'agent:main:discord:channel:c1';

/** The policy surface and the session tools, run directly: enough of a call path for these tests. */
class PolicyExecutor implements ToolExecutor {
  tools: Record<string, ToolImplementation> = {};
  constructor(private readonly h: Harness) {}
  surface(turn: TurnContext): ToolSurface {
    const s = resolveToolSurface(this.h.config, turn, { implemented: (id) => (id in this.tools ? { ok: true } : undefined) });
    if (s.error) return { ok: false, message: s.error };
    return { ok: true, tools: s.tools.map((id) => ({ id, description: id, parameters: this.tools[id]!.parameters })) };
  }
  async execute(call: ToolCallRequest, scope: ToolCallScope): Promise<ToolResult> {
    if (!scope.surface.includes(call.tool)) return { content: [{ type: 'text', text: 'not on surface' }], isError: true };
    const ctx = {
      toolCallId: call.toolCallId,
      signal: scope.signal,
      turn: scope.turn,
      sessionKey: scope.sessionKey,
      workspaceDir: '.',
      log,
      approvals: { request: async () => ({ id: '', outcome: 'cancelled' as const }) },
    };
    return (await this.tools[call.tool]!.execute(call.args, ctx)) as ToolResult;
  }
}

let h: Harness;
afterEach(() => h.cleanup());

const isChild = (r: ModelRequest) => r.system.includes('You are a subagent');
const toolNames = (r: ModelRequest) => r.tools.map((t) => t.name).sort();
const allText = (r: ModelRequest) => JSON.stringify(r.messages);

async function setup(config: WardenConfigInput, model: ScriptedProvider, extraTools: Record<string, ToolImplementation> = {}) {
  h = await createHarness(config);
  const executor = new PolicyExecutor(h);
  const announced: SubagentRunView[] = [];
  let onAnnounce: (() => void) | undefined;
  const runtime: WardenAgentRuntime = createAgentRuntime(
    h.deps(model, executor, {
      announce: (_key, run) => {
        announced.push(run);
        onAnnounce?.();
      },
    }),
  );
  const surfaceOptions = { implemented: (id: string) => (id in executor.tools ? { ok: true as const } : undefined) };
  executor.tools = { ...createSessionTools({ config: h.config, sessions: runtime.sessions, surfaceOptions }), ...extraTools };
  const nextAnnounce = () => new Promise<void>((resolve) => (onAnnounce = resolve));
  return { runtime, executor, announced, nextAnnounce };
}

const noop = (id: string): ToolImplementation => ({ id, parameters: { type: 'object', properties: {} }, execute: async () => ({ content: [{ type: 'text', text: id }] }) });

describe('sessions_spawn', () => {
  it('a subagent never exceeds its parent’s tools, even when it runs as a broader agent', async () => {
    const model = createScriptedProvider([], {
      fallback: (r) => {
        if (isChild(r)) return { text: 'child result: 42' };
        if (allText(r).includes('Results from your subagents')) return { text: 'Final: 42' };
        return { calls: [{ name: 'sessions_spawn', args: { task: 'compute the answer', agentId: 'helper', label: 'answer' } }, { name: 'sessions_yield', args: {} }] };
      },
    });
    const wide = Object.fromEntries(['read', 'write', 'exec', 'web_fetch', 'memory_search'].map((id) => [id, noop(id)]));
    const { runtime, nextAnnounce } = await setup(
      {
        agents: {
          list: [
            { id: 'main', default: true, tools: { allow: ['read', 'sessions_spawn', 'sessions_yield', 'subagents'] } },
            { id: 'helper', tools: { profile: 'coding' } },
          ],
        },
      },
      model,
      wide,
    );
    const announced = nextAnnounce();
    const first = await runtime.runTurn({ sessionKey: PARENT, turn: channelTurn(), input: { text: 'find the answer' }, signal: new AbortController().signal });
    expect(first).toMatchObject({ status: 'completed', rounds: 1 });
    await announced;

    const parentTools = toolNames(model.requests[0]!);
    expect(parentTools).toEqual(['read', 'sessions_spawn', 'sessions_yield', 'subagents']);
    const child = model.requests.find(isChild)!;
    // The helper agent alone would get the wide coding tools at depth 1 …
    const helperAlone = resolveToolSurface(h.config, channelTurn({ agentId: 'helper', spawnDepth: 1 }), { implemented: () => ({ ok: true }) }).tools;
    expect(helperAlone).toEqual(expect.arrayContaining(['write', 'exec', 'web_fetch']));
    // … but under the parent's ceiling it keeps only what the parent had, minus the leaf denies.
    expect(toolNames(child)).toEqual(['read', 'sessions_yield']);
    for (const t of toolNames(child)) expect(parentTools).toContain(t);

    const second = await runtime.runTurn({ sessionKey: PARENT, turn: channelTurn(), input: { text: 'and?' }, signal: new AbortController().signal });
    expect(second.reply).toBe('Final: 42');
    const delivered = model.requests.at(-1)!;
    expect(withoutNonces(allText(delivered))).toContain('<untrusted source=\\"subagent:');
    expect(allText(delivered)).toContain('child result: 42');
  });

  it('refuses to spawn beyond agents.defaults.subagents.maxSpawnDepth', async () => {
    const { runtime } = await setup({}, createScriptedProvider());
    const tools = createSessionTools({ config: h.config, sessions: runtime.sessions, surfaceOptions: { implemented: () => ({ ok: true }) } });
    const result = (await tools.sessions_spawn.execute(
      { task: 'x' },
      { toolCallId: 't', signal: new AbortController().signal, turn: channelTurn({ spawnDepth: 1 }), sessionKey: 'agent:main:subagent:abc', workspaceDir: '.', log, approvals: { request: async () => ({ id: '', outcome: 'cancelled' }) } },
    )) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.content[0]).toEqual({
      type: 'text',
      text: 'sessions_spawn is not allowed at this depth (current depth: 1, max: 1; agents.defaults.subagents.maxSpawnDepth).',
    });
  });
});

describe('subagents', () => {
  it('lists, steers and kills the runs this session spawned, and only those', async () => {
    const model = createScriptedProvider([], { fallback: (r) => (isChild(r) ? { text: 'slow child', delayMs: 5_000 } : { text: 'ok' }) });
    const { runtime, nextAnnounce } = await setup({}, model);
    const spawned = await runtime.sessions.spawn({ parentKey: PARENT, parentTurn: channelTurn(), inherited: { allow: ['read'], deny: [] }, task: 'wait', label: 'waiter' });
    expect(spawned.ok).toBe(true);
    const runId = spawned.ok ? spawned.value.runId : '';
    const tools = createSessionTools({ config: h.config, sessions: runtime.sessions, surfaceOptions: { implemented: () => ({ ok: true }) } });
    const ctx = (sessionKey: string) => ({
      toolCallId: 't',
      signal: new AbortController().signal,
      turn: channelTurn(),
      sessionKey,
      workspaceDir: '.',
      log,
      approvals: { request: async () => ({ id: '', outcome: 'cancelled' as const }) },
    });
    const run = async (args: Record<string, unknown>, key = PARENT) => (await tools.subagents.execute(args, ctx(key))) as ToolResult;

    expect((await run({ action: 'list' })).details).toMatchObject({ subagents: [{ runId, label: 'waiter', status: 'running' }] });
    expect((await run({ action: 'list' }, 'agent:main:discord:channel:other')).details).toEqual({ subagents: [] });
    expect((await run({ action: 'steer', runId, message: 'hurry' })).details).toMatchObject({ status: 'steered' });
    expect((await run({ action: 'kill', runId }, 'agent:main:discord:channel:other')).isError).toBe(true);
    const ended = nextAnnounce();
    expect((await run({ action: 'kill', runId })).details).toMatchObject({ status: 'killed' });
    await ended;
    expect((await runtime.sessions.runs(PARENT))[0]).toMatchObject({ status: 'killed' });
  });
});

describe('sessions_list, sessions_history, sessions_send, agents_list', () => {
  it('reads and messages other sessions of the same agent only', async () => {
    const model = createScriptedProvider([], { fallback: (r) => ({ text: `seen: ${r.messages.length} messages` }) });
    const { runtime } = await setup({ agents: { list: [{ id: 'main', default: true, name: 'Main' }, { id: 'ops' }] } }, model);
    const other = 'agent:main:slack:channel:c9';
    // A conversation created the session: the router recorded where it is.
    await h.sessionContexts.record(other, 'main', { provider: 'slack', chat: 'channel', guildId: 'T1', channelId: 'c9', channelName: 'ops' }, 'U9');
    await h.transcripts.append(other, [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text: 'deploy at noon' }] } }]);
    await h.transcripts.append('agent:ops:slack:channel:c9', [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text: 'secret ops' }] } }]);
    const tools = createSessionTools({ config: h.config, sessions: runtime.sessions, surfaceOptions: { implemented: () => ({ ok: true }) } });
    const ctx = {
      toolCallId: 't',
      signal: new AbortController().signal,
      turn: channelTurn(),
      sessionKey: PARENT,
      workspaceDir: '.',
      log,
      approvals: { request: async () => ({ id: '', outcome: 'cancelled' as const }) },
    };

    const list = (await tools.sessions_list.execute({}, ctx)) as ToolResult;
    expect((list.details as { sessions: Array<{ sessionKey: string }> }).sessions.map((s) => s.sessionKey)).toEqual([other]);

    const history = (await tools.sessions_history.execute({ sessionKey: other }, ctx)) as ToolResult;
    expect(history.content[0]!.type).toBe('text');
    expect(withoutNonces((history.content[0] as { text: string }).text)).toMatch(/^<untrusted source="session:agent:main:slack:channel:c9">\n#\d+ .* user: deploy at noon\n<\/untrusted>$/);
    const denied = (await tools.sessions_history.execute({ sessionKey: 'agent:ops:slack:channel:c9' }, ctx)) as ToolResult;
    expect(denied.isError).toBe(true);

    const sent = (await tools.sessions_send.execute({ sessionKey: other, message: 'status?' }, ctx)) as ToolResult;
    expect(sent.content[0]).toMatchObject({ text: expect.stringContaining('seen: 2 messages') });
    // The target session saw the message as untrusted text from another session.
    const targetReq = model.requests.at(-1)!;
    expect(withoutNonces(JSON.stringify(targetReq.messages.at(-1)))).toContain('<untrusted source=\\"session:agent:main:discord:channel:c1\\">');
    expect(((await tools.sessions_send.execute({ sessionKey: PARENT, message: 'me' }, ctx)) as ToolResult).isError).toBe(true);
    // A key no conversation created is refused, even one the key syntax would accept.
    const made = (await tools.sessions_send.execute({ sessionKey: 'agent:main:slack:channel:c404', message: 'hi' }, ctx)) as ToolResult;
    expect(made).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('no conversation has started it') }] });

    const agents = (await tools.agents_list.execute({}, ctx)) as ToolResult;
    expect(agents.details).toEqual({
      agents: [
        { id: 'main', name: 'Main', default: true, model: 'anthropic/test-model', current: true },
        { id: 'ops', name: undefined, default: false, model: 'anthropic/test-model', current: false },
      ],
    });
  });
});

describe('canReach', () => {
  const from = 'agent:main:discord:channel:c1';
  const spawned = (k: string) => (k === 'agent:main:subagent:mine' ? from : k === 'agent:main:subagent:theirs' ? 'agent:main:discord:channel:c2' : undefined);
  const alice = { agentId: 'main', provider: 'discord', senderId: 'U1', senderIsOwner: false };
  const owner = { ...alice, senderIsOwner: true };
  it.each([
    [alice, from, true],
    [alice, 'agent:main:slack:channel:c7', true],
    [alice, 'agent:main:discord:channel:c7:thread:t1', true],
    [alice, 'agent:main:discord:direct:u1', true],
    [alice, 'agent:main:discord:direct:u2', false],
    [alice, 'agent:main:slack:direct:u1', false],
    [alice, 'agent:main:subagent:mine', true],
    [alice, 'agent:main:subagent:theirs', false],
    [alice, 'agent:ops:discord:channel:c1', false],
    [owner, 'agent:main:discord:direct:u2', true],
    [owner, 'agent:main:subagent:theirs', true],
    [owner, 'agent:ops:discord:channel:c1', false],
  ])('%o → %s: %s', (turn, key, expected) => {
    expect(canReach(turn, from, key, spawned)).toBe(expected);
  });

  it('sessions_list leaves out other people’s DMs', async () => {
    const { runtime } = await setup({}, createScriptedProvider());
    await h.transcripts.append('agent:main:discord:direct:u2', [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text: 'private' }] } }]);
    await h.transcripts.append('agent:main:discord:direct:u1', [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text: 'mine' }] } }]);
    const tools = createSessionTools({ config: h.config, sessions: runtime.sessions, surfaceOptions: { implemented: () => ({ ok: true }) } });
    const ctx = {
      toolCallId: 't',
      signal: new AbortController().signal,
      turn: channelTurn({ senderId: 'U1' }),
      sessionKey: PARENT,
      workspaceDir: '.',
      log,
      approvals: { request: async () => ({ id: '', outcome: 'cancelled' as const }) },
    };
    const list = (await tools.sessions_list.execute({}, ctx)) as ToolResult;
    expect((list.details as { sessions: Array<{ sessionKey: string }> }).sessions.map((s) => s.sessionKey)).toEqual(['agent:main:discord:direct:u1']);
    expect(((await tools.sessions_history.execute({ sessionKey: 'agent:main:discord:direct:u2' }, ctx)) as ToolResult).isError).toBe(true);
  });
});
