// The call path: wrapper-chain overhead per call for a no-op tool with three hooks (median µs),
// next to calling the same tool directly in the same run; and approval resolve → execution
// start latency (median), with the decision made in-process as a chat click would be.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ApprovalService } from '../src/approvals/service.js';
import { parseConfig } from '../src/config/index.js';
import { EventBus } from '../src/events/events.js';
import { HookBus } from '../src/hooks/bus.js';
import { log } from '../src/log/log.js';
import type { TurnContext } from '../src/policy/context.js';
import { openWardenStore } from '../src/app/migrations.js';
import { Transcripts } from '../src/store/transcript.js';
import { ToolInvoker } from '../src/tools/invoke/chain.js';
import type { ToolCallContext, ToolImplementation } from '../src/tools/types.js';
import { type Bench, fmtMs, fmtRatio, measure, summarize } from './harness.js';

const ITERATIONS = 5000;
const APPROVALS = 200;

const TURN: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', channelId: '42', senderId: 'owner-1', senderIsOwner: true, spawnDepth: 0 };

const bench: Bench = async (report) => {
  log.level = 'silent';
  const parsed = parseConfig({ owners: { discord: ['owner-1'] } });
  if (!parsed.ok) throw parsed.error;
  const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-bench-callpath-')) });
  if (!opened.ok) throw new Error(opened.error.message);
  const store = opened.store;
  const events = new EventBus();
  const approvals = new ApprovalService({ store, config: parsed.value.config, events });

  let started = 0;
  const noop: ToolImplementation = {
    id: 'noop',
    parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
    async execute() {
      started = performance.now();
      return { content: [{ type: 'text', text: 'ok' }] };
    },
  };
  const hooks = new HookBus();
  hooks.on('before_tool_call', () => undefined);
  hooks.on('after_tool_call', () => undefined);
  hooks.on('tool_result_persist', () => undefined);

  const bare = new ToolInvoker({ resolveTool: () => noop, hooks, events });
  const persisted = new ToolInvoker({ resolveTool: () => noop, hooks, events, transcripts: new Transcripts(store.db) });
  const ctx: ToolCallContext = {
    toolCallId: 'c',
    signal: new AbortController().signal,
    turn: TURN,
    sessionKey: 's',
    workspaceDir: '/tmp',
    log,
    approvals: approvals.requester({ agentId: 'main', sessionKey: 's', provider: 'discord' }),
  };

  // Varying arguments keep loop detection (on, as in production) from warning or blocking.
  let n = 0;
  const direct = await measure(() => noop.execute({ n: n++ }, ctx), { iterations: ITERATIONS });
  const chain = await measure(() => bare.invoke({ tool: 'noop', args: { n: n++ }, turn: TURN, sessionKey: 's', workspaceDir: '/tmp' }), { iterations: ITERATIONS });
  const chainStore = await measure(() => persisted.invoke({ tool: 'noop', args: { n: n++ }, turn: TURN, sessionKey: 's2', workspaceDir: '/tmp' }), { iterations: ITERATIONS });
  report({ name: 'no-op tool called directly (median)', value: fmtMs(direct.median) });
  report({ name: 'through the chain, 3 hooks, no store (median)', value: fmtMs(chain.median), note: `overhead ${fmtMs(chain.median - direct.median)}, ${fmtRatio(chain.median / Math.max(direct.median, 1e-6))}` });
  report({ name: 'through the chain, 3 hooks, SQLite transcript (median)', value: fmtMs(chainStore.median), note: `overhead ${fmtMs(chainStore.median - direct.median)}; p99 ${fmtMs(chainStore.p99)}` });

  // Approval: a hook asks, the "click" resolves at once; measure click → execute() entry.
  const asking = new HookBus();
  asking.on('before_tool_call', () => ({ requireApproval: { title: 'bench', description: 'bench' } }));
  const gated = new ToolInvoker({ resolveTool: () => noop, hooks: asking, approvals, events });
  let clicked = 0;
  events.on('approval.requested', ({ request }) => {
    setImmediate(() => {
      clicked = performance.now();
      void approvals.resolve(request.id, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    });
  });
  const latencies: number[] = [];
  for (let i = 0; i < APPROVALS; i++) {
    const out = await gated.invoke({ tool: 'noop', args: { n: n++ }, turn: TURN, sessionKey: 's3', workspaceDir: '/tmp' });
    if (out.status !== 'ok') throw new Error(`approval bench call ${i} did not run: ${out.status}`);
    latencies.push(started - clicked);
  }
  const latency = summarize(latencies.slice(20));
  report({ name: 'approval resolve → execution start (median)', value: fmtMs(latency.median), note: `p99 ${fmtMs(latency.p99)}, ${latency.iterations} approvals` });

  approvals.shutdown();
  await store.close();
};

export default bench;
