// Load: 100 sessions × 50 messages through the router, the session queues and the real turn
// loop (SQLite transcripts) with an instant model and no tools. Nothing may be lost, order is
// kept within each session, and the heap does not grow from one full round to the next.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { createHarness, echoModel, FunctionToolExecutor } from '../../src/app/agent-testing.js';
import { createAgentRuntime } from '../../src/agent/runtime.js';
import { Gateway } from '../../src/gateway/gateway.js';
import type { ChatAdapter, InboundMessage, OutboundMessage, ReplyTarget } from '../../src/gateway/types.js';

const SESSIONS = 100;
const MESSAGES = 50;

/** A chat platform in process: every DM channel's replies, in arrival order. */
class MemoryChat implements ChatAdapter {
  readonly provider = 'discord' as const;
  readonly replies = new Map<string, string[]>();
  private deliver: ((m: InboundMessage) => Promise<void>) | undefined;
  approvals = { provider: 'discord', show: async () => {}, update: async () => {} };
  async start(onMessage: (m: InboundMessage) => Promise<void>) {
    this.deliver = onMessage;
  }
  async send(target: ReplyTarget, message: OutboundMessage) {
    const list = this.replies.get(target.channelId) ?? [];
    list.push(message.text);
    this.replies.set(target.channelId, list);
  }
  typing() {
    return () => {};
  }
  async stop() {}
  dm(user: number, text: string) {
    return this.deliver!({
      provider: 'discord',
      chatType: 'dm',
      channelId: `dm-${user}`,
      senderId: `user-${user}`,
      text,
      mentionsBot: false,
      messageId: `${user}-${text}`,
      receivedAt: Date.now(),
    });
  }
}

const harness = await createHarness();
afterAll(() => harness.cleanup());

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

describe('load', () => {
  it(`${SESSIONS} sessions × ${MESSAGES} messages: none lost, order kept, heap stable`, async () => {
    const { config } = harness;
    const tools = new FunctionToolExecutor({});
    const agent = createAgentRuntime(harness.deps(echoModel, tools));
    const chat = new MemoryChat();
    const gateway = new Gateway({
      config,
      adapters: [chat],
      agent,
      tools,
      toolReport: () => ({ tools: [], removed: [], unavailable: [], warnings: [] }),
      approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
      // Each session receives its 50 messages faster than turns finish: room for all of them.
      maxPending: MESSAGES,
    });
    await gateway.start();

    const round = async (tag: string, messages: number) => {
      chat.replies.clear();
      // Interleaved: message i of every session before message i+1 of any.
      for (let i = 0; i < messages; i++) for (let s = 0; s < SESSIONS; s++) await chat.dm(s, `${tag}:${i}`);
      await waitUntil(() => gateway.stats().sessions === 0);
      for (let s = 0; s < SESSIONS; s++) {
        expect(chat.replies.get(`dm-${s}`), `session ${s}`).toEqual(Array.from({ length: messages }, (_, i) => `re: ${tag}:${i}`));
      }
    };

    // A short warm-up creates every session once (compiled code, prepared statements, caches).
    await round('warmup', 5);
    const before = heapAfterGc();
    await round('measured', MESSAGES);
    const after = heapAfterGc();
    // Transcripts live in SQLite, not the heap; a leak of per-message state would show here
    // (5,000 messages × even 2 KB each is 10 MB).
    expect(after - before).toBeLessThan(8 * 1024 * 1024);

    await gateway.stop();
  }, 120_000);
});

async function waitUntil(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 10));
}
