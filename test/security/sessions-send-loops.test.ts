import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from '../../src/agent/runtime.js';
import { AgentSessions, MAX_SEND_HOPS } from '../../src/agent/sessions.js';
import { channelTurn, createHarness, text, type Harness } from '../../src/app/agent-testing.js';
import type { ToolCallRequest, ToolCallScope, ToolExecutor, ToolSurface } from '../../src/agent/types.js';
import { createScriptedProvider } from '../../src/models/scripted.js';
import type { ModelRequest } from '../../src/models/types.js';
import type { ToolResult } from '../../src/tools/types.js';

/**
 * Attack class: sessions message each other in a circle (A → B → A, A → B → C → A) or down an
 * endless line, so that each turn waits on a turn that waits on it: every session in the chain
 * is held until the timeout, and the run never ends. A send into a session that is waiting on
 * the chain is refused at once, naming the chain, and a chain stops at MAX_SEND_HOPS hops.
 */
const key = (name: string) => `agent:main:discord:channel:${name}`;
const NAMES = ['a', 'b', 'c', 'd', 'e', 'f'];

let h: Harness;
let sessions: AgentSessions;
let results: string[];
beforeEach(async () => {
  h = await createHarness();
  for (const [i, n] of NAMES.entries()) await h.sessionContexts.record(key(n), 'main', { provider: 'discord', chat: 'channel', guildId: 'g1', channelId: n, channelName: `ch-${n}` }, `u${i}`);
  results = [];
});
afterEach(() => h.cleanup());

/** Calls sessions_send as the real tool does: from the calling turn's session, in its run. */
class SendingExecutor implements ToolExecutor {
  surface(): ToolSurface {
    return { ok: true, tools: [{ id: 'sessions_send', description: 'send', parameters: { type: 'object', properties: {} } }] };
  }
  async execute(call: ToolCallRequest, scope: ToolCallScope): Promise<ToolResult> {
    const args = call.args as { sessionKey: string; message: string };
    const sent = await sessions.send({ fromKey: scope.sessionKey, fromTurn: scope.turn, ceiling: { deny: [] }, toKey: args.sessionKey, text: args.message, timeoutMs: 20_000, signal: scope.signal, runId: scope.runId });
    const out = sent.ok ? `reply: ${sent.value.reply}` : `error: ${sent.message}`;
    results.push(out);
    return text(out);
  }
}

/** `HOPS b,a`: send `HOPS a` to session b; with no hops left, answer. A tool result is answered with itself. */
function respond(r: ModelRequest) {
  const last = r.messages.at(-1)!;
  const said = last.content.map((p) => ('text' in p ? p.text : '')).join('');
  if (last.role === 'toolResult') return { text: `done (${said.slice(0, 400)})` };
  const hops = /HOPS ([a-z,]*)/.exec(said)?.[1]?.split(',').filter(Boolean) ?? [];
  if (hops.length === 0) return { text: 'end of the line' };
  return { text: '', calls: [{ name: 'sessions_send', args: { sessionKey: key(hops[0]!), message: `HOPS ${hops.slice(1).join(',')}` } }] };
}

async function start(from: string, hops: string[]) {
  sessions = new AgentSessions({ config: h.config, transcripts: h.transcripts, runs: h.subagentRuns, contexts: h.sessionContexts });
  const runtime = createAgentRuntime(h.deps(createScriptedProvider([], { fallback: respond }), new SendingExecutor(), { sessions }));
  const started = Date.now();
  const outcome = await runtime.runTurn({ sessionKey: key(from), turn: channelTurn({ channelId: from }), input: { text: `HOPS ${hops.join(',')}` }, signal: new AbortController().signal });
  return { outcome, ms: Date.now() - started };
}

describe('sessions_send chains end', () => {
  it.each<[string, string[], RegExp]>([
    ['a → b → a', ['b', 'a'], /session agent:main:discord:channel:a is waiting for this message chain \(.*:a → .*:b → .*:a\)/],
    ['a → b → c → a', ['b', 'c', 'a'], /channel:a is waiting for this message chain/],
    ['a → b → c → b', ['b', 'c', 'b'], /channel:b is waiting for this message chain/],
    ['a → b → c → d → e (a fourth hop)', ['b', 'c', 'd', 'e'], new RegExp(`sessions_send hop limit reached \\(${MAX_SEND_HOPS} hops`)],
  ])('%s is refused at once, and every turn in the chain finishes', async (_name, hops, refusal) => {
    const { outcome, ms } = await start('a', hops);
    expect(outcome.status).toBe('completed');
    expect(ms).toBeLessThan(10_000);
    expect(results.some((r) => refusal.test(r))).toBe(true);
  });

  it(`${MAX_SEND_HOPS} hops in a line go through, and a finished chain leaves nothing behind`, async () => {
    const first = await start('a', ['b', 'c', 'd']);
    expect(first.outcome.status).toBe('completed');
    expect(results.every((r) => r.startsWith('reply:'))).toBe(true);
    results = [];
    // The same sessions again, in a new run and in the same order: not a loop.
    await start('a', ['b', 'c', 'd']);
    expect(results.every((r) => r.startsWith('reply:'))).toBe(true);
  });
});
