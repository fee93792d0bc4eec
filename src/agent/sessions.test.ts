import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import type { WardenConfigInput } from '../config/index.js';
import { log } from '../log/log.js';
import { createScriptedProvider, type ScriptedProvider } from '../models/scripted.js';
import type { ModelRequest } from '../models/types.js';
import type { TurnContext } from '../policy/context.js';
import { resolveToolSurface } from '../policy/surface.js';
import { createSessionTools } from './tools/index.js';
import type { ToolResult } from '../tools/types.js';
import { createAgentRuntime, type WardenAgentRuntime } from './runtime.js';
import { AgentSessions, interruptedResult, type SubagentRunView } from './sessions.js';
import { channelTurn, createHarness, text, type Harness } from '../app/agent-testing.js';
import type { ToolCallRequest, ToolCallScope, ToolExecutor, ToolSurface } from './types.js';
import { withoutNonces } from '../tools/untrusted-testing.js';
import { openWardenStore } from '../app/migrations.js';
import type { StoreEngine } from '../store/db.js';
import { SessionContextStore } from '../turn/session-contexts.js';
import { SubagentRunStore } from './subagent-runs.js';
import { DbTranscriptStore } from './transcript.js';

const PARENT = 'agent:main:discord:channel:c1';
const isChild = (r: ModelRequest) => r.system.includes('You are a subagent');
const toolNames = (r: ModelRequest) => r.tools.map((t) => t.name).sort();

/** Offers what the policy allows for each turn (every tool counts as implemented). */
class PolicySurface implements ToolExecutor {
  readonly turns: TurnContext[] = [];
  constructor(private readonly h: Harness) {}
  surface(turn: TurnContext): ToolSurface {
    this.turns.push(turn);
    const s = resolveToolSurface(this.h.config, turn, { implemented: () => ({ ok: true }) });
    if (s.error) return { ok: false, message: s.error };
    return { ok: true, tools: s.tools.map((id) => ({ id, description: id, parameters: { type: 'object', properties: {} } })) };
  }
  readonly scopes: ToolCallScope[] = [];
  async execute(call: ToolCallRequest, scope: ToolCallScope): Promise<ToolResult> {
    this.scopes.push(scope);
    return text(call.tool);
  }
}

let h: Harness;
afterEach(() => h.cleanup());

/** The agent harness with its store on `engine`. */
async function harnessOn(engine: StoreEngine, configInput: WardenConfigInput = {}): Promise<Harness> {
  const base = await createHarness(configInput);
  if (engine === 'sqlite') return base;
  const where = await freshStoreTarget(engine);
  const opened = await openWardenStore({ dataDir: where.dataDir, url: where.url });
  if (!opened.ok) throw new Error(opened.error.message);
  const { db } = opened.store;
  const stores = { transcripts: new DbTranscriptStore(db), subagentRuns: new SubagentRunStore(db), sessionContexts: new SessionContextStore(db) };
  return {
    ...base,
    ...stores,
    store: opened.store,
    deps: (provider, tools, extra = {}) => base.deps(provider, tools, { ...stores, ...extra }),
    cleanup: async () => {
      await opened.store.close();
      await base.cleanup();
    },
  };
}

/** One Warden process's agent runtime over the harness's database; a second call is a restart. */
function boot(model: ScriptedProvider, options: { isProcessAlive?: (pid: number) => boolean } = {}) {
  const announced: SubagentRunView[] = [];
  const waiters: Array<() => void> = [];
  const announce = (_key: string, run: SubagentRunView) => {
    announced.push(run);
    waiters.shift()?.();
  };
  const executor = new PolicySurface(h);
  const sessions = new AgentSessions({ config: h.config, transcripts: h.transcripts, runs: h.subagentRuns, contexts: h.sessionContexts, announce, ...options });
  const runtime: WardenAgentRuntime = createAgentRuntime(h.deps(model, executor, { sessions }));
  const nextAnnounce = () => new Promise<void>((resolve) => waiters.push(resolve));
  return { runtime, executor, announced, nextAnnounce };
}

const toolCtx = (sessionKey: string) => ({
  toolCallId: 't',
  signal: new AbortController().signal,
  turn: channelTurn(),
  sessionKey,
  workspaceDir: '.',
  log,
  approvals: { request: async () => ({ id: '', outcome: 'cancelled' as const }) },
});

describe.each(ENGINES)('subagent runs across a restart on %s', (engine) => {
  it('a child running when Warden stopped is reported interrupted, listed, and its parent is told', async () => {
    h = await harnessOn(engine, { agents: { list: [{ id: 'main', default: true, tools: { profile: 'coding' } }] } });
    // The old child's model answers only once the restart has looked at its run.
    let late!: () => void;
    const restarted = new Promise<void>((resolve) => (late = resolve));
    const old = createScriptedProvider([], { fallback: (r) => (isChild(r) ? { text: 'too late' } : { text: 'ok' }) });
    const before = boot({ ...old, complete: async (r, signal) => (isChild(r) && (await restarted), old.complete(r, signal)) });
    const spawned = await before.runtime.sessions.spawn({ parentKey: PARENT, parentTurn: channelTurn(), inherited: { allow: ['read', 'sessions_yield'], deny: ['exec'] }, task: 'count files', label: 'counter' });
    if (!spawned.ok) throw new Error(spawned.message);
    const { runId, childKey } = spawned.value;
    const oldRunEnded = before.nextAnnounce();

    // Restart: a new runtime over the same database, before the old child could finish.
    const model = createScriptedProvider([], { fallback: (r) => ({ text: isChild(r) ? 'child again' : `parent saw ${r.messages.length} messages` }) });
    const after = boot(model);
    expect(await after.runtime.sessions.runs(PARENT)).toMatchObject([{ runId, status: 'running' }]);
    const interrupted = await after.runtime.sessions.recover();
    expect(interrupted).toMatchObject([{ runId, childKey, parentKey: PARENT, status: 'interrupted', result: interruptedResult({ childKey }) }]);
    expect(after.announced).toEqual(interrupted);
    expect(await after.runtime.sessions.recover()).toEqual([]);

    // The old process's late end does not turn the interrupted run back into a result.
    late();
    await oldRunEnded;
    expect(await after.runtime.sessions.runs(PARENT)).toMatchObject([{ runId, status: 'interrupted' }]);

    const tools = createSessionTools({ config: h.config, sessions: after.runtime.sessions, surfaceOptions: { implemented: () => ({ ok: true }) } });
    const listed = (await tools.subagents.execute({ action: 'list' }, toolCtx(PARENT))) as ToolResult;
    expect(listed.details).toMatchObject({ subagents: [{ runId, label: 'counter', status: 'interrupted', depth: 1, result: expect.stringContaining('interrupted') }] });
    expect(((await tools.subagents.execute({ action: 'steer', runId, message: 'go on' }, toolCtx(PARENT))) as ToolResult).content[0]).toMatchObject({
      text: `subagent ${runId} already interrupted`,
    });
    expect(await after.runtime.sessions.parentOf(childKey)).toBe(PARENT);

    // The parent's next turn receives the result as untrusted data, once.
    await after.runtime.runTurn({ sessionKey: PARENT, turn: channelTurn(), input: { text: 'news?' }, signal: new AbortController().signal });
    const told = JSON.stringify(model.requests.at(-1)!.messages);
    expect(withoutNonces(told)).toContain(`<untrusted source=\\"subagent:${runId}\\">`);
    expect(told).toContain(`Subagent \\"counter\\" (${runId}) interrupted:`);
    expect(told).toContain('Warden restarted before it finished');
    await after.runtime.runTurn({ sessionKey: PARENT, turn: channelTurn(), input: { text: 'again?' }, signal: new AbortController().signal });
    expect(JSON.stringify(model.requests.at(-1)!.messages.at(-1))).not.toContain('interrupted');
  });

  it('a child turn after the restart runs under its stored envelope, not the wider agent surface', async () => {
    h = await harnessOn(engine, { agents: { list: [{ id: 'main', default: true, tools: { profile: 'coding' } }] } });
    const before = boot(createScriptedProvider([], { fallback: () => ({ text: 'first run done' }) }));
    const ended = before.nextAnnounce();
    const spawned = await before.runtime.sessions.spawn({
      parentKey: PARENT,
      parentTurn: channelTurn({ senderIsOwner: true }),
      inherited: { allow: ['read', 'write', 'sessions_yield'], deny: ['write'] },
      task: 'summarise',
    });
    if (!spawned.ok) throw new Error(spawned.message);
    await ended;
    expect(before.announced).toMatchObject([{ status: 'done', result: 'first run done' }]);

    const model = createScriptedProvider([], { fallback: () => ({ text: 'follow-up answered' }) });
    const after = boot(model);
    const sent = await after.runtime.sessions.send({ fromKey: PARENT, fromTurn: channelTurn(), ceiling: { deny: [] }, toKey: spawned.value.childKey, text: 'one more thing', timeoutMs: 10_000, signal: new AbortController().signal });
    expect(sent).toMatchObject({ ok: true, value: { status: 'completed', reply: 'follow-up answered' } });
    const childTurn = after.executor.turns.at(-1)!;
    expect(childTurn).toMatchObject({ spawnDepth: 1, senderIsOwner: false, inherited: { allow: ['read', 'write', 'sessions_yield'], deny: ['write'] } });
    // The coding profile alone would offer exec, write, … at depth 1; the stored ceiling leaves read and yield.
    const wide = resolveToolSurface(h.config, channelTurn({ spawnDepth: 1 }), { implemented: () => ({ ok: true }) }).tools;
    expect(wide).toEqual(expect.arrayContaining(['exec', 'write']));
    expect(toolNames(model.requests.at(-1)!)).toEqual(['read', 'sessions_yield']);
  });

  it('a turn sent into a conversation lets its approvals defer, a turn sent into a subagent waits inline', async () => {
    h = await harnessOn(engine, { agents: { list: [{ id: 'main', default: true, tools: { profile: 'coding' } }] } });
    const calling = () => createScriptedProvider([], { fallback: (r) => (r.messages.at(-1)?.role === 'toolResult' ? { text: 'done' } : { text: '', calls: [{ name: 'read', args: {} }] }) });
    const first = boot(calling());
    const ended = first.nextAnnounce();
    const spawned = await first.runtime.sessions.spawn({ parentKey: PARENT, parentTurn: channelTurn(), inherited: { allow: ['read'], deny: [] }, task: 'look' });
    if (!spawned.ok) throw new Error(spawned.message);
    await ended;
    const other = 'agent:main:discord:channel:c2';
    await h.sessionContexts.record(other, 'main', { provider: 'discord', chat: 'channel', guildId: 'g1', channelId: 'c2', channelName: 'dev' }, 'u2');
    const sent = boot(calling());
    const send = (toKey: string) => sent.runtime.sessions.send({ fromKey: PARENT, fromTurn: channelTurn(), ceiling: { deny: [] }, toKey, text: 'read it', timeoutMs: 10_000, signal: new AbortController().signal });
    expect(await send(other)).toMatchObject({ ok: true });
    expect(await send(spawned.value.childKey)).toMatchObject({ ok: true });
    expect(sent.executor.scopes.map((s) => [s.sessionKey, s.deferApprovals])).toEqual([
      [other, true],
      [spawned.value.childKey, undefined],
    ]);
  });

  it('refuses a child turn whose stored envelope is not trusted, and sessions it does not know', async () => {
    h = await harnessOn(engine);
    const before = boot(createScriptedProvider([], { fallback: () => ({ text: 'done' }) }));
    const ended = before.nextAnnounce();
    const spawned = await before.runtime.sessions.spawn({ parentKey: PARENT, parentTurn: channelTurn(), inherited: { deny: [] }, task: 't' });
    if (!spawned.ok) throw new Error(spawned.message);
    await ended;
    await h.store.db.run('UPDATE subagent_runs SET policy_version = 0');
    const after = boot(createScriptedProvider());
    const send = (toKey: string) => after.runtime.sessions.send({ fromKey: PARENT, fromTurn: channelTurn(), ceiling: { deny: [] }, toKey, text: 'hi', timeoutMs: 1_000, signal: new AbortController().signal });
    expect(await send(spawned.value.childKey)).toEqual({
      ok: false,
      message: `subagent session "${spawned.value.childKey}" cannot run a turn: its stored tool policy has version 0, not 1`,
    });
    expect(await send('agent:main:subagent:nobody')).toEqual({ ok: false, message: 'unknown subagent session "agent:main:subagent:nobody" (use subagents with action "list")' });
    expect(after.executor.turns).toEqual([]);
  });

  it('stopping aborts the children but leaves them running in the store, for the next start to interrupt', async () => {
    h = await harnessOn(engine);
    const model = createScriptedProvider([], { fallback: (r) => (isChild(r) ? { text: 'never', delayMs: 60_000 } : { text: 'ok' }) });
    const before = boot(model);
    const spawned = await before.runtime.sessions.spawn({ parentKey: PARENT, parentTurn: channelTurn(), inherited: { deny: [] }, task: 'slow' });
    if (!spawned.ok) throw new Error(spawned.message);
    await expect.poll(() => model.requests.some(isChild)).toBe(true);
    before.runtime.sessions.stop();
    // Turns of one session run in order: this one starts once the aborted child turn has ended.
    const stopped = new AbortController();
    stopped.abort();
    await before.runtime.runTurn({ sessionKey: spawned.value.childKey, turn: channelTurn({ spawnDepth: 1 }), input: { text: 'after' }, signal: stopped.signal });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await before.runtime.sessions.spawn({ parentKey: PARENT, parentTurn: channelTurn(), inherited: { deny: [] }, task: 'more' })).toEqual({
      ok: false,
      message: 'Warden is shutting down; no new subagents start',
    });
    expect(before.announced).toEqual([]);
    expect(await h.subagentRuns.get(spawned.value.runId)).toMatchObject({ status: 'running', endedAt: undefined });
    expect(await boot(createScriptedProvider()).runtime.sessions.recover()).toMatchObject([{ runId: spawned.value.runId, status: 'interrupted' }]);
  });

  it('leaves running the runs of another live process', async () => {
    h = await harnessOn(engine);
    const { inherited: _i, ...turn } = channelTurn({ spawnDepth: 1 });
    await h.subagentRuns.insert({
      runId: 'elsewhere',
      childKey: 'agent:main:subagent:elsewhere',
      parentKey: PARENT,
      agentId: 'main',
      label: 'x',
      task: 'x',
      depth: 1,
      role: 'leaf',
      inherited: { deny: [] },
      policyVersion: 1,
      turn,
      status: 'running',
      owner: { pid: process.pid + 100_000, instance: 'other' },
      startedAt: 1,
    });
    expect(await boot(createScriptedProvider(), { isProcessAlive: () => true }).runtime.sessions.recover()).toEqual([]);
    expect(await boot(createScriptedProvider(), { isProcessAlive: () => false }).runtime.sessions.recover()).toMatchObject([{ runId: 'elsewhere', status: 'interrupted' }]);
  });
});
