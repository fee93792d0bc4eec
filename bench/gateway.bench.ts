// The router's share of a reply: one message through the gateway (route, session queue, turn
// with an instant model on a real SQLite transcript, reply) next to the same turn called
// directly; the routing decision alone; and approval click → tool start through the approval
// service and the wrapper chain.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createAgentRuntime } from '../src/agent/runtime.js';
import { createHarness, echoModel, FunctionToolExecutor } from '../src/app/agent-testing.js';
import { ApprovalService } from '../src/approvals/service.js';
import { EventBus } from '../src/events/events.js';
import { approveOn, withWebLocalOwner } from '../src/gateway/approval-clicks.js';
import { isCommand } from '../src/gateway/commands.js';
import { Gateway } from '../src/gateway/gateway.js';
import { routeMessage } from '../src/gateway/router.js';
import { GovernedToolExecutor } from '../src/app/tool-executor.js';
import type { ChatAdapter, InboundMessage, OutboundMessage } from '../src/gateway/types.js';
import { fmtMs, fmtRatio, measure, summarize, type Bench } from './harness.js';

/** Resolves each send to the waiter of its channel: the reply time of one message. */
class LoopbackChat implements ChatAdapter {
  readonly provider = 'web' as const;
  private deliver: ((m: InboundMessage) => Promise<void>) | undefined;
  private waiter: (() => void) | undefined;
  approvals = { provider: 'web', show: async () => {}, update: async () => {} };
  async start(onMessage: (m: InboundMessage) => Promise<void>) {
    this.deliver = onMessage;
  }
  async send(_t: unknown, _m: OutboundMessage) {
    this.waiter?.();
  }
  typing() {
    return () => {};
  }
  async stop() {}
  roundTrip(senderId: string, text: string): Promise<void> {
    const done = new Promise<void>((resolve) => (this.waiter = resolve));
    void this.deliver!({ provider: 'web', chatType: 'dm', channelId: 'web', senderId, text, mentionsBot: true, messageId: text, receivedAt: Date.now() });
    return done;
  }
}

const bench: Bench = async (report) => {
  const harness = await createHarness({ tools: { profile: 'coding', exec: { host: 'gateway' } } });
  const { config, store, dir } = harness;
  mkdirSync(path.join(dir, 'workspace'));
  const tools = new FunctionToolExecutor({});
  const agent = createAgentRuntime(harness.deps(echoModel, tools));
  const chat = new LoopbackChat();
  const gateway = new Gateway({
    config,
    adapters: [chat],
    agent,
    tools,
    toolReport: () => ({ tools: [], removed: [], unavailable: [], warnings: [] }),
    approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
  });
  await gateway.start();

  // Fresh sessions per sample, so both sides append to equally short transcripts.
  let n = 0;
  const direct = await measure(
    () => agent.runTurn({ sessionKey: `agent:main:web:direct:d${n++ % 200}`, turn: { agentId: 'main', provider: 'web', chat: 'dm', senderIsOwner: true, model: 'anthropic/instant', spawnDepth: 0 }, input: { text: 'hi' }, signal: new AbortController().signal }),
    { iterations: 2000 },
  );
  let m = 0;
  const routed = await measure(() => chat.roundTrip(`g${m++ % 200}`, 'hi'), { iterations: 2000 });
  report({ name: 'turn, called directly (instant model, SQLite transcript) p50', value: fmtMs(direct.p50), note: `p99 ${fmtMs(direct.p99)}` });
  report({ name: 'same turn through the gateway (route, queue, reply) p50', value: fmtMs(routed.p50), note: `p99 ${fmtMs(routed.p99)}, ${fmtRatio(routed.p50 / direct.p50)} of direct` });

  const message: InboundMessage = { provider: 'discord', chatType: 'channel', guildId: '1', channelId: '2', channelName: 'dev', senderId: '3', text: '<@9> /tools', mentionsBot: true, messageId: 'm', receivedAt: 0 };
  const route = await measure(() => routeMessage(config, message, { isCommand }), { iterations: 20_000 });
  report({ name: 'routing decision (session key, mention gate, context)', value: fmtMs(route.p50), note: `p99 ${fmtMs(route.p99)}` });
  await gateway.stop();

  // Approval click → tool start: exec of a command that misses the allowlist, approved by a click.
  const events = new EventBus();
  const approvals = new ApprovalService({ store, config: withWebLocalOwner(config), events });
  const executor = new GovernedToolExecutor(config, { config, baseDir: dir, store }, { approvals, events });
  const approve = approveOn((id, d, by) => approvals.resolve(id, d, by), 'web', 'typed');
  const turn = { agentId: 'main', provider: 'web', chat: 'dm' as const, channelId: 'web', senderId: 'local', senderIsOwner: true, spawnDepth: 0 };
  const surface = await executor.surface(turn);
  const ids = surface.ok ? surface.tools.map((t) => t.id) : [];
  const afterClick: number[] = [];
  const commandRan: number[] = [];
  for (let i = 0; i < 60; i++) {
    let clickedAt = 0;
    const off = events.on('approval.requested', ({ request }) => {
      off();
      clickedAt = performance.now();
      void approve({ approvalId: request.id, decision: 'allow-once', userId: 'local' });
    });
    const result = await executor.execute(
      { toolCallId: `b${i}`, tool: 'exec', args: { command: `echo bench-${i}` } },
      { sessionKey: `agent:main:web:direct:bench${i}`, turn, signal: new AbortController().signal, surface: ids },
    );
    const doneAt = performance.now();
    const ran = (result.details as { durationMs?: number } | undefined)?.durationMs;
    if (result.isError || clickedAt === 0 || ran === undefined) throw new Error(`exec did not run after the click: ${JSON.stringify(result.content)}`);
    if (i >= 10) {
      afterClick.push(doneAt - clickedAt);
      commandRan.push(ran);
    }
  }
  const click = summarize(afterClick);
  const ran = summarize(commandRan);
  report({ name: 'approval click → exec result (service + chain + process) p50', value: fmtMs(click.p50), note: `p99 ${fmtMs(click.p99)}, ${afterClick.length} clicks` });
  report({ name: '  of which the command itself ran (echo) p50', value: fmtMs(ran.p50), note: `Warden's share ≈ ${fmtMs(Math.max(0, click.p50 - ran.p50))}` });
  approvals.shutdown();
  await harness.cleanup();
};

export default bench;
