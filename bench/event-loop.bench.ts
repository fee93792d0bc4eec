// The one event loop every conversation shares, under load: 100 sessions chat through the
// gateway (instant model, SQLite transcripts; each session about one message a second), a memory index builds over a workspace of
// Markdown files, and the browser snapshots corpus pages — all at once, in one process — while
// monitorEventLoopDelay records how late the loop runs. The same monitor over an idle loop is
// the baseline. Target: p99 delay ≤ 20 ms. LOOP_PARTS=chat,memory,browser picks the loads (all
// by default), to see which one delays the loop.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { mkdtempSync } from 'node:fs';
import { createAgentRuntime } from '../src/agent/runtime.js';
import { createHarness, echoModel, FunctionToolExecutor } from '../src/app/agent-testing.js';
import { snapshotPage } from '../src/browser/page-snapshot.js';
import { BrowserSession } from '../src/browser/session.js';
import { Gateway } from '../src/gateway/gateway.js';
import type { ChatAdapter, InboundMessage, OutboundMessage } from '../src/gateway/types.js';
import { log } from '../src/log/log.js';
import type { Resolver } from '../src/net/index.js';
import { MemoryIndex } from '../src/tools/core/memory/memory-index.js';
import { type Bench, fmtMs } from './harness.js';

const SESSIONS = 100;
const LOAD_MS = 8_000;
const MEMORY_FILES = 400;
const PACE_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test/fixtures/web-pages');
const noDns: Resolver = async () => {
  throw Object.assign(new Error('offline benchmark'), { code: 'ENOTFOUND' });
};

/** Delivers each message to the gateway and resolves the sender's waiter when the reply is sent. */
class LoopbackChat implements ChatAdapter {
  readonly provider = 'web' as const;
  private deliver: ((m: InboundMessage) => Promise<void>) | undefined;
  private readonly waiting = new Map<string, () => void>();
  approvals = { provider: 'web', show: async () => {}, update: async () => {} };
  async start(onMessage: (m: InboundMessage) => Promise<void>) {
    this.deliver = onMessage;
  }
  async send(target: { channelId: string }, _m: OutboundMessage) {
    const done = this.waiting.get(target.channelId);
    this.waiting.delete(target.channelId);
    // A reply leaves through a socket: its completion comes back as I/O, in a later turn of the loop.
    setImmediate(() => done?.());
  }
  typing() {
    return () => {};
  }
  async stop() {}
  roundTrip(session: number, text: string): Promise<void> {
    const channelId = `c${session}`;
    const done = new Promise<void>((resolve) => this.waiting.set(channelId, resolve));
    // A message arrives as I/O too, not as a continuation of the previous reply.
    setImmediate(() => void this.deliver!({ provider: 'web', chatType: 'dm', channelId, senderId: `u${session}`, text, mentionsBot: true, messageId: `${channelId}-${text}`, receivedAt: Date.now() }));
    return done;
  }
}

const ms = (ns: number) => ns / 1e6;

async function delayWhile(run: () => Promise<void>): Promise<{ p50: number; p99: number; max: number }> {
  const monitor = monitorEventLoopDelay({ resolution: 1 });
  monitor.enable();
  await run();
  monitor.disable();
  return { p50: ms(monitor.percentile(50)), p99: ms(monitor.percentile(99)), max: ms(monitor.max) };
}

const bench: Bench = async (report) => {
  const level = log.level;
  log.level = 'silent';
  const root = mkdtempSync(path.join(tmpdir(), 'warden-bench-loop-'));
  const workspace = path.join(root, 'workspace');
  mkdirSync(path.join(workspace, 'memory'), { recursive: true });
  // A memory folder of Markdown notes, 10-40 KB each, built from the corpus' article text.
  const pages = existsSync(corpus) ? readdirSync(corpus).filter((d) => existsSync(path.join(corpus, d, 'expected.html'))) : [];
  for (let i = 0; i < MEMORY_FILES; i++) {
    const text = pages.length > 0 ? readFileSync(path.join(corpus, pages[i % pages.length]!, 'expected.html'), 'utf8').replace(/<[^>]+>/g, ' ') : 'note '.repeat(4000);
    writeFileSync(path.join(workspace, 'memory', `note-${i}.md`), `# Note ${i}\n\n## Part one\n${text.slice(0, 20_000)}\n\n## Part two\n${text.slice(20_000, 40_000)}\n`);
  }

  const idle = await delayWhile(() => new Promise((r) => setTimeout(r, 2000)));
  report({ name: 'event loop delay, idle (baseline) p99', value: fmtMs(idle.p99), note: `p50 ${fmtMs(idle.p50)}, max ${fmtMs(idle.max)}` });

  const harness = await createHarness({ tools: { profile: 'coding', exec: { host: 'gateway' } } });
  const tools = new FunctionToolExecutor({});
  const agent = createAgentRuntime(harness.deps(echoModel, tools));
  const chat = new LoopbackChat();
  const gateway = new Gateway({
    config: harness.config,
    adapters: [chat],
    agent,
    tools,
    toolReport: () => ({ tools: [], removed: [], unavailable: [], warnings: [] }),
    approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
  });
  await gateway.start();
  const browser = existsSync('/usr/bin/chromium') ? await BrowserSession.start({ name: 'loop', headless: true, userDataDir: path.join(root, 'profile') }, { policy: {}, resolve: noDns }) : undefined;
  const page = await browser?.currentOrNewTab();
  // Every request the pages make goes to the guard proxy, which blocks it (no DNS here). One
  // snapshot first, so Playwright's lazily loaded parts are in before the measured window.
  if (page && pages.length > 0) {
    await page.setContent('<p>warm</p>');
    await snapshotPage(page, {});
  }

  let replies = 0;
  let snapshots = 0;
  let indexedFiles = 0;
  const loaded = await delayWhile(async () => {
    const until = performance.now() + LOAD_MS;
    const parts = (process.env.LOOP_PARTS ?? 'chat,memory,browser').split(',');
    const chatting = Array.from({ length: parts.includes('chat') ? SESSIONS : 0 }, async (_, s) => {
      // People chat at a pace: each session sends about one message a second, spread out.
      await sleep(Math.random() * PACE_MS);
      for (let n = 0; performance.now() < until; n++) {
        await chat.roundTrip(s, `hello ${n}`);
        replies++;
        await sleep(PACE_MS * (0.5 + Math.random()));
      }
    });
    const indexing = (async () => {
      if (!parts.includes('memory')) return;
      const index = new MemoryIndex(path.join(root, 'memory.sqlite'));
      indexedFiles = (await index.sync(workspace)).indexed.length;
      index.close();
    })();
    const browsing = (async () => {
      if (!page || !parts.includes('browser')) return;
      for (let i = 0; performance.now() < until; i++) {
        const html = readFileSync(path.join(corpus, pages[i % pages.length]!, 'source.html'), 'utf8');
        await page.setContent(html, { waitUntil: 'domcontentloaded', timeout: 30_000 }).catch(() => undefined);
        await snapshotPage(page, {});
        snapshots++;
      }
    })();
    await Promise.all([...chatting, indexing, browsing]);
  });
  await browser?.close();
  await gateway.stop();
  await harness.cleanup();
  rmSync(root, { recursive: true, force: true });
  log.level = level;

  report({
    name: `event loop delay, ${SESSIONS} sessions + memory index + browser, p99`,
    value: fmtMs(loaded.p99),
    note: `p50 ${fmtMs(loaded.p50)}, max ${fmtMs(loaded.max)}; target ≤ 20 ms`,
  });
  report({
    name: '  load carried meanwhile',
    value: `${Math.round(replies / (LOAD_MS / 1000))} replies/s`,
    note: `${indexedFiles} memory files indexed, ${browser ? `${snapshots} page snapshots` : 'no Chromium: browser skipped'}, over ${LOAD_MS / 1000} s`,
  });
};
export default bench;
