import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from '../../src/agent/runtime.js';
import { channelTurn, createHarness, type Harness } from '../../src/app/agent-testing.js';
import type { ToolCallRequest, ToolCallScope, ToolExecutor } from '../../src/agent/types.js';
import { GovernedToolExecutor } from '../../src/app/tool-executor.js';
import { createScriptedProvider, type ScriptStep } from '../../src/models/scripted.js';
import type { Message, ModelRequest } from '../../src/models/types.js';
import type { ToolRuntime } from '../../src/app/tool-runtime.js';

/**
 * A model that loops tries to keep its count low: it spreads the loop over subagents, over a
 * session it messages, over one round of parallel calls, or alternates two calls. Loop detection
 * counts per run — the turn and every turn it starts — so each of these is blocked where the
 * same loop in one turn would be, and the model can make no call that escapes counting.
 */

const READ = { name: 'read', args: { path: 'notes.txt' } };
const BLOCKED = /CRITICAL: Called read with identical outcomes \d+ times\./;

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** Records the run every call carries, then hands it to the governed path. */
class RunSpy implements ToolExecutor {
  readonly runs: Array<string | undefined> = [];
  constructor(private readonly inner: ToolExecutor) {}
  surface(...args: Parameters<ToolExecutor['surface']>) {
    return this.inner.surface(...args);
  }
  execute(call: ToolCallRequest, scope: ToolCallScope) {
    this.runs.push(scope.runId);
    return this.inner.execute(call, scope);
  }
}

const textOf = (m: Message) => m.content.map((p) => ('text' in p ? p.text : '')).join('');
/** The request's current turn: the message that started it and the tool results since. */
function thisTurn(r: ModelRequest): { ask: string; results: string[] } {
  let i = r.messages.length - 1;
  while (i >= 0 && r.messages[i]!.role !== 'user') i--;
  return { ask: i >= 0 ? textOf(r.messages[i]!) : '', results: r.messages.slice(i + 1).filter((m) => m.role === 'toolResult').map(textOf) };
}

async function boot(decide: (turn: { ask: string; results: string[] }) => ScriptStep) {
  const harness = await createHarness({
    owners: { discord: ['u1'] },
    tools: { profile: 'coding', exec: { host: 'gateway', security: 'full', ask: 'off' } },
    agents: { defaults: { maxToolRounds: 60 } },
  });
  h = harness;
  mkdirSync(path.join(harness.dir, 'workspace'), { recursive: true });
  writeFileSync(path.join(harness.dir, 'workspace', 'notes.txt'), 'nothing new\n');
  const toolRuntime: ToolRuntime = { config: harness.config, baseDir: harness.dir, store: harness.store };
  const spy = new RunSpy(new GovernedToolExecutor(harness.config, toolRuntime, {}));
  const seen: Array<{ ask: string; results: string[] }> = [];
  const provider = createScriptedProvider([], {
    fallback: (request) => {
      const turn = thisTurn(request);
      seen.push(turn);
      return decide(turn);
    },
  });
  const runtime = createAgentRuntime(harness.deps(provider, spy));
  toolRuntime.sessions = runtime.sessions;
  /** The last model request of the turn started by `ask`: every result that turn saw. */
  const resultsOf = (ask: string) => seen.filter((t) => t.ask.includes(ask)).at(-1)?.results ?? [];
  const owner = channelTurn({ senderId: 'u1', senderIsOwner: true });
  const turn = (text: string, sessionKey = 'agent:main:discord:channel:c1') => runtime.runTurn({ sessionKey, turn: owner, input: { text }, signal: new AbortController().signal });
  return { h: harness, spy, turn, resultsOf, runtime };
}

const calls = (n: number, call: { name: string; args: Record<string, unknown> } = READ): ScriptStep => ({ calls: Array.from({ length: n }, () => call) });

describe('a loop spread out to keep its count low is still one run', () => {
  it('over subagents: three children reading the same file add up with their parent', async () => {
    const t = await boot(({ ask, results }) => {
      if (ask.includes('CHILD')) return results.length < 8 ? calls(1) : { text: 'child done' };
      if (results.length === 0) return calls(1);
      if (results.length === 1) return { calls: [1, 2, 3].map((i) => ({ name: 'sessions_spawn', args: { task: `CHILD ${i}: read notes.txt eight times` } })) };
      return { text: 'spawned' };
    });
    await t.turn('start the readers');
    await expect.poll(async () => (await t.h.subagentRuns.ofParent('agent:main:discord:channel:c1')).filter((r) => r.status !== 'running').length, { timeout: 10_000 }).toBe(3);
    const children = [1, 2, 3].map((i) => t.resultsOf(`CHILD ${i}`));
    // 1 in the parent + 3 × 8 in the children: from the 21st read on, each is blocked.
    const blocked = children.flat().filter((r) => BLOCKED.test(r)).length;
    expect(blocked).toBe(1 + 3 * 8 - 20);
    expect(new Set(t.spy.runs).size).toBe(1);
  });

  it('over a session it messages: the receiving turn continues the sender’s count', async () => {
    const target = 'agent:main:discord:channel:c2';
    const t = await boot(({ ask, results }) => {
      if (ask.includes('RELAYED')) return results.length < 10 ? calls(1) : { text: 'relayed done' };
      if (results.length < 15) return calls(1);
      if (results.length === 15) return { calls: [{ name: 'sessions_send', args: { sessionKey: target, message: 'RELAYED: read notes.txt ten times' } }] };
      return { text: 'sent' };
    });
    await t.h.sessionContexts.record(target, 'main', { provider: 'discord', chat: 'channel', guildId: 'g1', channelId: 'c2', channelName: 'ops' }, 'u1');
    await t.turn('relay the reads');
    const relayed = t.resultsOf('RELAYED');
    expect(relayed.slice(0, 5).every((r) => !BLOCKED.test(r))).toBe(true);
    expect(relayed.slice(5).every((r) => BLOCKED.test(r))).toBe(true);
  });

  it('in one round of parallel calls: 25 identical reads at once, the last five blocked', async () => {
    const t = await boot(({ results }) => (results.length === 0 ? calls(25) : { text: 'done' }));
    await t.turn('read it all at once');
    const results = t.resultsOf('read it all at once');
    expect(results.filter((r) => BLOCKED.test(r))).toHaveLength(5);
  });

  it('by alternating two calls: the ping-pong is blocked at twenty', async () => {
    const other = { name: 'read', args: { path: 'other.txt' } };
    const t = await boot(({ results }) => (results.length < 24 ? calls(1, results.length % 2 ? other : READ) : { text: 'done' }));
    writeFileSync(path.join(t.h.dir, 'workspace', 'other.txt'), 'also nothing\n');
    await t.turn('alternate');
    const results = t.resultsOf('alternate');
    expect(results.findIndex((r) => r.includes('CRITICAL: You are alternating between repeated tool-call patterns'))).toBe(19);
  });

  it('by rewording a command that keeps failing the same way: argument churn is reported to the model', async () => {
    // Two spellings, one silent failure (exit 1, no output): the same outcome each time.
    const variants = ['false', 'test -e /nonexistent'];
    const t = await boot(({ results }) => (results.length < 11 ? calls(1, { name: 'exec', args: { command: variants[Math.floor(results.length / 2) % 2]! } }) : { text: 'done' }));
    await t.turn('churn');
    const results = t.resultsOf('churn');
    expect(results.slice(0, 10).some((r) => r.includes('Tool-loop warning'))).toBe(false);
    expect(results[10]).toContain('[System note: Tool-loop warning after 10 repeated calls.');
  });

  it('every call a turn makes carries its run: the model has no uncounted path', async () => {
    const t = await boot(({ ask, results }) => (ask.includes('CHILD') ? (results.length < 2 ? calls(1) : { text: 'ok' }) : results.length === 0 ? { calls: [READ, { name: 'sessions_spawn', args: { task: 'CHILD: two reads' } }] } : { text: 'ok' }));
    await t.turn('first');
    await expect.poll(() => t.spy.runs.length, { timeout: 10_000 }).toBe(4);
    await t.turn('second');
    expect(t.spy.runs.every((r) => typeof r === 'string' && r.length > 0)).toBe(true);
    expect(new Set(t.spy.runs).size).toBe(2);
  });
});
