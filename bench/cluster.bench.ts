// Several instances on one PostgreSQL database: real `warden start` processes behind the Slack
// fake's HTTP events with a scripted OpenAI-compatible model. Measures messages per second in
// the steady state a long-running server is in: each run's instances first answer WARM
// messages each (on warm-up conversations of their own, spread over the instances as the burst
// is), then a burst of MESSAGES over 30 fresh conversations is timed. 1 and 2 instances (3 with
// WARDEN_BENCH_CLUSTER_COUNTS=1,2,3), under two deliveries — round-robin (consecutive messages
// of a conversation reach different instances, as a load balancer spreads them) and sticky (a
// conversation stays on one instance) — in interleaved rounds, the ratio to one instance taken
// within each round (median and spread printed); beside each rate, the CPU per message of the
// instances, of PostgreSQL and of the harness (the fakes and the sender, this process), read
// from /proc, and the server-side statements per message (pg_stat_statements). The earlier
// method (90 messages after one warm-up message per instance: a cold process, dominated by the
// JIT) is timed in the same runs, before the warm-up, and printed as a baseline row. Then
// multi-core scaling simulated with an I/O-bound model; click → result p50 when the click reaches the instance that posted the
// card vs another one; and a message's store work on SQLite vs PostgreSQL (in process) on the
// path a real message takes (place, lease, turn, release), with the round trips it makes (counted
// on the client's socket), beside the same work written statement by statement.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { DbTranscriptStore } from '../src/agent/transcript.js';
import { createAgentRuntime } from '../src/agent/runtime.js';
import { incomingAppend } from '../src/agent/incoming.js';
import { SubagentRunStore } from '../src/agent/subagent-runs.js';
import type { AgentRuntime } from '../src/agent/types.js';
import { FunctionToolExecutor } from '../src/app/agent-testing.js';
import { modelSettings } from '../src/models/settings.js';
import type { ModelProvider } from '../src/models/types.js';
import type { TurnContext } from '../src/policy/context.js';
import { SessionContextStore } from '../src/turn/session-contexts.js';
import { LEASE_CHANNEL, Leases, leaseDigest, type HeldLease } from '../src/cluster/leases.js';
import { openWardenStore } from '../src/app/migrations.js';
import { AuditLog } from '../src/store/audit.js';
import { parseConfig } from '../src/config/index.js';
import { UsageService } from '../src/usage/service.js';
import { UsageStore } from '../src/usage/store.js';
import type { Store } from '../src/store/store.js';
import { Transcripts } from '../src/store/transcript.js';
import { startTestCluster } from '../test/postgres-cluster.js';
import { startFakeOpenAI } from '../test/fakes/models/openai-fake.js';
import type { FakeModelServer } from '../test/fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../test/fakes/slack/index.js';
import { ALICE, OLGA, cardFor, click, directMessage, dmAnswers, mention, sharedWorkspace, startInstance, stopInstance, type Instance } from '../test/cluster/harness.js';
import { fmtMs, fmtRatio, measure, summarize, type Bench } from './harness.js';
import { cpuMs, loadAverage, ownCpuMs, serverPids } from './proc-cpu.js';

/** The timed burst, after the warm-up (steady state). */
const MESSAGES = Number(process.env.WARDEN_BENCH_CLUSTER_MESSAGES ?? 600);
/** Warm-up messages per instance before the burst. */
const WARM = Number(process.env.WARDEN_BENCH_CLUSTER_WARM ?? 300);
/** The earlier method's burst, timed after one warm-up message per instance (a cold process). */
const COLD_MESSAGES = 90;
const CONVERSATIONS = 30;
/** Rounds of every instance count under both deliveries, interleaved (the machine's load moves between runs; medians are reported). */
const ROUNDS = Number(process.env.WARDEN_BENCH_CLUSTER_ROUNDS ?? 3);
const COUNTS = (process.env.WARDEN_BENCH_CLUSTER_COUNTS ?? '1,2').split(',').map(Number);
/** The I/O-bound simulation: the model answers after this long, and each instance has this many conversations in flight. */
const MODEL_MS = 2000;
const IN_FLIGHT = 4;
const IO_ROUNDS = 3;
const TARGET_SCALING = 1.7;
const CLICKS = 8;
/** Issue 32's targets. */
const TARGET_ONE = 300;
const TARGET_RATIO = 0.95;
const TARGET_TURN_MS = 1;

type Delivery = 'round-robin' | 'sticky';
/** Which instance message `m` (of conversation `m mod CONVERSATIONS`) reaches. */
const instanceFor = (delivery: Delivery, m: number, count: number): number =>
  delivery === 'sticky' ? (m % CONVERSATIONS) % count : (m + Math.floor(m / CONVERSATIONS)) % count;

export async function freshDatabase(adminUrl: string): Promise<string> {
  const admin = new URL(adminUrl);
  const name = `bench_${randomUUID().replace(/-/g, '')}`;
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  admin.pathname = `/${name}`;
  // Statements per message, counted by the server (loaded at the cluster's start).
  const db = new pg.Client({ connectionString: admin.toString() });
  await db.connect();
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await db.end();
  return admin.toString();
}

/** Statements the server ran in `url`'s database since the last reset (the reset itself not counted). */
async function statements(url: string, reset = false): Promise<number> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const row = await db.query<{ n: string | null }>(
      `SELECT SUM(calls) AS n FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'`,
    );
    if (reset) await db.query('SELECT pg_stat_statements_reset()');
    return Number(row.rows[0]?.n ?? 0);
  } finally {
    await db.end();
  }
}

/** Replies posted to DMs (the turn's answer), counted once per inbound message. */
const answers = (fake: SlackFake) => fake.calls('chat.postMessage').filter((c) => String(c.body.channel).startsWith('D') && !c.body.blocks).length;

/** One throughput run: its instances' cold burst (the earlier method), then the steady-state burst. */
interface ThroughputRun {
  /** The earlier method: COLD_MESSAGES after one warm-up message per instance. */
  cold: number;
  rate: number;
  statements: number;
  /** CPU µs per message in the burst: the instances together, PostgreSQL's processes, this process (fakes and sender). */
  instanceUs: number;
  postgresUs: number;
  harnessUs: number;
}

/**
 * `count` fresh instances on a fresh database. Each sends COLD_MESSAGES right after its first
 * answer (the earlier, cold figure), then WARM × count warm-up messages, then the timed burst
 * of MESSAGES. Each phase has 30 conversations of its own, spread over the instances by
 * `delivery` alike, so every instance count meets the burst with the same history behind it.
 */
async function throughput(fake: SlackFake, model: FakeModelServer, adminUrl: string, count: number, delivery: Delivery): Promise<ThroughputRun> {
  const storeUrl = await freshDatabase(adminUrl);
  const workspace = sharedWorkspace();
  const instances: Instance[] = [];
  const answered = dmAnswers(fake);
  const port = Number(new URL(adminUrl).port);
  /** Sends `n` messages over the conversations of `phase`, spread by `delivery`; resolves once all are answered. */
  const burst = async (phase: string, n: number): Promise<number> => {
    const goal = answered.count() + n;
    const started = performance.now();
    const sends: Promise<Response>[] = [];
    for (let m = 0; m < n; m++) sends.push(directMessage(fake, instances[instanceFor(delivery, m, count)]!, `U0${phase}${String(m % CONVERSATIONS).padStart(3, '0')}`, `message ${m}`));
    await Promise.all(sends);
    await waitUntil(() => answered.count() >= goal, 300_000, 5);
    return n / ((performance.now() - started) / 1000);
  };
  try {
    for (let i = 0; i < count; i++) instances.push(await startInstance(`bench${i}`, { fake, storeUrl, workspace, leaseSec: 15, modelUrl: model.url }));
    await Promise.all(instances.map((inst, i) => directMessage(fake, inst, `U0FIRST${i}`, 'hello')));
    await waitUntil(() => answered.count() >= count, 60_000);
    const cold = await burst('COLD', COLD_MESSAGES);
    await burst('WARM', WARM * count);
    await statements(storeUrl, true);
    const pids = instances.map((inst) => inst.child.pid!);
    const servers0 = new Map(serverPids(port).map((p) => [p, cpuMs(p)]));
    const instances0 = pids.reduce((sum, p) => sum + cpuMs(p), 0);
    const own0 = ownCpuMs();
    const rate = await burst('USER', MESSAGES);
    const perMessage = (ms: number) => (ms * 1000) / MESSAGES;
    const harnessUs = perMessage(ownCpuMs() - own0);
    const instanceUs = perMessage(pids.reduce((sum, p) => sum + cpuMs(p), 0) - instances0);
    // Connections opened during the burst count from zero; those closed during it are missed.
    const postgresUs = perMessage(serverPids(port).reduce((sum, p) => sum + cpuMs(p) - (servers0.get(p) ?? 0), 0));
    return { cold, rate, statements: (await statements(storeUrl)) / MESSAGES, instanceUs, postgresUs, harnessUs };
  } finally {
    answered.stop();
    await Promise.all(instances.map(stopInstance));
    // What this run recorded is not read again: the next run starts with the fakes' records empty.
    fake.requests.clear();
    fake.messages.clear();
    fake.userMessages.clear();
    model.requests.length = 0;
  }
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const spread = (xs: readonly number[], fmt: (x: number) => string): string => `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;

/**
 * `count` instances, `IN_FLIGHT` conversations each; every conversation sends `IO_ROUNDS`
 * messages, the next once the previous is answered, message k to instance (c + k) mod count.
 */
async function closedLoop(fake: SlackFake, adminUrl: string, modelUrl: string, count: number): Promise<number> {
  const storeUrl = await freshDatabase(adminUrl);
  const workspace = sharedWorkspace();
  const instances: Instance[] = [];
  const run = randomUUID().slice(0, 4).toUpperCase();
  const dmAnswers = (user: string) => fake.calls('chat.postMessage').filter((c) => c.body.channel === `D${user.slice(1)}` && !c.body.blocks).length;
  try {
    for (let i = 0; i < count; i++) instances.push(await startInstance(`io${i}`, { fake, storeUrl, workspace, leaseSec: 15, modelUrl }));
    const warm = answers(fake) + count;
    await Promise.all(instances.map((inst, i) => directMessage(fake, inst, `U0IOWARM${run}${i}`, 'hello')));
    await waitUntil(() => answers(fake) >= warm, 60_000);
    const started = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT * count }, async (_, c) => {
        const user = `U0IO${run}${String(c).padStart(3, '0')}`;
        for (let k = 0; k < IO_ROUNDS; k++) {
          await directMessage(fake, instances[(c + k) % count]!, user, `message ${k}`);
          await waitUntil(() => dmAnswers(user) > k, 60_000, 5);
        }
      }),
    );
    return (IN_FLIGHT * count * IO_ROUNDS) / ((performance.now() - started) / 1000);
  } finally {
    await Promise.all(instances.map(stopInstance));
  }
}

async function clickToResult(fake: SlackFake, adminUrl: string): Promise<{ same: number[]; other: number[] }> {
  const storeUrl = await freshDatabase(adminUrl);
  const workspace = sharedWorkspace();
  const a = await startInstance('click-a', { fake, storeUrl, workspace, leaseSec: 15 });
  const b = await startInstance('click-b', { fake, storeUrl, workspace, leaseSec: 15 });
  const same: number[] = [];
  const other: number[] = [];
  try {
    for (let i = 0; i < CLICKS * 2; i++) {
      const at = i % 2 === 0 ? a : b;
      const marker = `bench-${i}-${randomUUID().slice(0, 6)}`;
      await mention(fake, a, ALICE, `/exec echo ${marker}`);
      const card = await cardFor(fake, marker);
      const started = performance.now();
      await click(fake, at, card, 'allow-once', OLGA);
      await fake.requests.waitFor((r) => r.path === '/api/chat.postMessage' && !r.body.blocks && String(r.body.text).includes(marker), 30_000, 'result');
      (at === a ? same : other).push(performance.now() - started);
    }
  } finally {
    await Promise.all([a, b].map(stopInstance));
  }
  return { same, other };
}

/** What the client sent PostgreSQL, counted at its sockets (see `roundTrips`). */
export interface WireCounter {
  /** Round trips. */
  count(): number;
  /** Statements executed: an Execute of the extended protocol, or a simple Query. */
  statements(): number;
  /** Transactions ended: a Sync (each batch or lone statement is one implicit transaction) or a simple Query. */
  commits(): number;
}

/**
 * Round trips to PostgreSQL: a client write after the server last answered on that connection
 * starts one (writes that follow before an answer are pipelined into it). Each write also holds
 * whole protocol messages (a type byte and a length), whose Executes and Syncs are counted.
 */
function roundTrips(port: number): WireCounter & { stop(): void } {
  let count = 0;
  let statements = 0;
  let commits = 0;
  const messages = (chunk: unknown) => {
    if (!Buffer.isBuffer(chunk)) return;
    for (let i = 0; i + 5 <= chunk.length; ) {
      const type = chunk[i]!;
      const length = chunk.readInt32BE(i + 1);
      if (length < 4) return;
      if (type === 0x45 || type === 0x51) statements++; // 'E' Execute, 'Q' Query
      if (type === 0x53 || type === 0x51) commits++; // 'S' Sync, 'Q' Query
      i += 1 + length;
    }
  };
  const waiting = new WeakSet<net.Socket>();
  const watched = new WeakSet<net.Socket>();
  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (this: net.Socket, ...args: unknown[]) {
    if (this.remotePort === port) {
      if (!watched.has(this)) {
        watched.add(this);
        this.on('data', () => waiting.delete(this));
      }
      if (!waiting.has(this)) {
        count++;
        waiting.add(this);
      }
      messages(args[0]);
    }
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  return { count: () => count, statements: () => statements, commits: () => commits, stop: () => void (net.Socket.prototype.write = write) };
}

const EXCHANGE = [
  { message: { role: 'user', content: [{ type: 'text', text: 'what is in the workspace?' }] } },
  { message: { role: 'assistant', content: [{ type: 'text', text: 'notes.md and plan.txt' }] } },
] as Parameters<DbTranscriptStore['append']>[1];

type TurnMode = 'plain' | 'one-by-one' | 'leased' | 'kept';

/**
 * A turn's store work as the agent does it: take the session's lease, read the transcript,
 * append the exchange, audit the turn, release. `one-by-one`: the work as it was before
 * batching (each statement awaited in turn: the transcript's two reads, a transaction of
 * awaited statements, the release and its notification apart). `leased`: the lease taken and
 * released around the work. `kept`: consecutive turns of one session with its next turn queued
 * on this instance (`hold`'s `keep`), so each turn's lease passes to the next in the write that
 * gives it up.
 */
async function turnStoreCost(store: Store, lease: Leases | undefined, mode: TurnMode, counter?: { count(): number }): Promise<{ p50: number; trips: number }> {
  const transcripts = new DbTranscriptStore(store.db);
  const rows = new Transcripts(store.db);
  const audit = new AuditLog(store.db);
  const never = new AbortController().signal;
  let n = 0;
  let trips = 0;
  let turns = 0;
  const work = async (key: string) => {
    if (mode === 'one-by-one') {
      const summary = await store.db.get(`SELECT * FROM transcript_entries WHERE session_key = ? AND role = 'system' AND content LIKE '{"type":"summary"%' ORDER BY id DESC LIMIT 1`, [key]);
      await store.db.all(`SELECT * FROM transcript_entries WHERE session_key = ? AND id > ? AND (role != 'system' OR NOT content LIKE '{"type":"summary"%') ORDER BY id`, [key, summary ? 1 : 0]);
      await store.db.tx(async () => {
        await rows.ensureSession(key, 'main', 'slack');
        for (const entry of EXCHANGE) await rows.append({ sessionKey: key, role: entry.message.role as 'user' | 'assistant', content: entry.message.content });
      });
    } else {
      await transcripts.load(key);
      await transcripts.append(key, EXCHANGE);
    }
    await audit.record({ type: 'turn.finished', subject: key, data: { rounds: 1 } });
  };
  const timing = await measure(
    async () => {
      const before = counter?.count() ?? 0;
      // Each mode its own sessions, so every row reads transcripts of the same sizes: twenty
      // sessions in turn (about 18 turns each); `kept`: 18 consecutive turns of one session, then the next.
      const key = `agent:main:slack:direct:${mode}:U${mode === 'kept' ? Math.floor(n++ / 18) : n++ % 20}`;
      if (mode === 'kept') await lease!.hold(`session:${key}`, never, () => work(key), undefined, () => true);
      else if (mode === 'leased') await lease!.hold(`session:${key}`, never, () => work(key));
      else if (mode === 'one-by-one') {
        const held = await lease!.tryAcquire(`session:${key}`);
        await work(key);
        await store.db.run('DELETE FROM leases WHERE name = ? AND holder = ? AND generation = ?', [held!.name, 'bench', held!.generation]);
        await store.db.notify('warden_lease', 'bench');
      } else await work(key);
      trips += (counter?.count() ?? 0) - before;
      turns++;
    },
    { iterations: 300, warmup: 50 },
  );
  return { p50: timing.p50, trips: trips / turns };
}

const MESSAGE_STEPS = ['place + lease + message + transcript read', 'lease (taken with the place)', 'reply + usage record', 'release'] as const;

/** What a message's store work is measured with, on one store. */
interface MessageRig {
  db: Store['db'];
  leases: Leases;
  runtime: AgentRuntime;
  transcripts: DbTranscriptStore;
  subagentRuns: SubagentRunStore;
  usage: UsageService;
  close(): Promise<void>;
}

/** Leases releasing as the previous round did: the two deletes and the notification as three statements. */
class PreviousLeases extends Leases {
  constructor(
    private readonly store: Store['db'],
    options: ConstructorParameters<typeof Leases>[1],
  ) {
    super(store, options);
  }

  override async release(lease: HeldLease, place?: number): Promise<void> {
    await this.store.batch([
      { sql: 'DELETE FROM leases WHERE name = ? AND holder = ? AND generation = ?', params: [lease.name, 'bench', lease.generation] },
      ...(place === undefined ? [] : [{ sql: 'DELETE FROM lease_queue WHERE seq = ? AND holder = ?', params: [place, 'bench'] }]),
      { notify: LEASE_CHANNEL, payload: leaseDigest(lease.name) },
    ]);
  }
}

/**
 * `previous`: the rig of the previous round's path (its release, see `previousMessage`).
 * `releaseAtOnce`: each lease released as its work ends, in a write of its own (as before
 * releases lingered for the next write: `Leases`' `releaseLingerMs` 0).
 */
export function messageRig(store: Store, previous = false, releaseAtOnce = previous): MessageRig {
  const config = parseConfig({ models: { default: 'local/m', providers: { local: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', models: [{ id: 'm', cost: { input: 1, output: 1 } }] } } } });
  if (!config.ok) throw new Error('bench config');
  const usage = new UsageService({ store: new UsageStore(store.db), config: () => config.value.config });
  const answer = { message: { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'notes.md and plan.txt' }] }, stopReason: 'end' as const, usage: { inputTokens: 120, outputTokens: 8 } };
  // An in-process model answering at once: what is left is the store's work (and the loop's own).
  const model: ModelProvider = { name: 'local', api: 'openai', complete: async () => answer };
  const transcripts = new DbTranscriptStore(store.db);
  const subagentRuns = new SubagentRunStore(store.db);
  const runtime = createAgentRuntime({
    config: config.value.config,
    models: (ref) => {
      const settings = modelSettings(config.value.config, ref);
      return settings.ok ? { ok: true, provider: model, settings: settings.value } : settings;
    },
    tools: new FunctionToolExecutor({}),
    transcripts,
    subagentRuns,
    sessionContexts: new SessionContextStore(store.db),
    usage,
  });
  const leases = new (previous ? PreviousLeases : Leases)(store.db, { ttlMs: 15_000, holder: 'bench', ...(releaseAtOnce ? { releaseLingerMs: 0 } : {}) });
  return { db: store.db, leases, runtime, transcripts, subagentRuns, usage, close: async () => (await usage.settled(), await leases.close()) };
}

const BENCH_TURN: TurnContext = { agentId: 'main', provider: 'slack', chat: 'dm', channelId: 'D1', senderId: 'U1', senderName: 'alice', senderIsOwner: false, spawnDepth: 0, model: 'local/m' };
const SAID = 'what is in the workspace?';

/**
 * A message's store work on the path a real one takes on a shared store, idle conversation
 * (`Gateway.lineUp` and `runItem`): its place, taking the session's lease and reading the turn's
 * start (transcript, waiting subagent results) in the same write; the turn on that lease; the
 * release once the reply is out. `steps`: the turn's store calls made one by one, as the agent
 * loop makes them (its message written with the model's answer, metered by the usage service),
 * each step's p50 and round trips. `agent`: the same message through the real agent loop
 * (`runTurn`, an in-process model answering at once), which adds the loop's own work.
 */
export type PathResult = { steps: Array<{ p50: number; trips: number }>; total: { p50: number; trips: number; statements: number; commits: number } };

const MODEL = { name: 'local', api: 'openai' as const, complete: async () => ({ message: { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'notes.md and plan.txt' }] }, stopReason: 'end' as const, usage: { inputTokens: 120, outputTokens: 8 } }) };

/**
 * `message(last)`: one message of a stream; `last`, the stream's last: what it leaves lingering
 * (its lease's release, which the next message's place would have carried) is sent before it
 * counts as done, and counted in it.
 */
export function messagePath(rig: MessageRig, label: string, mode: 'steps' | 'agent' | 'before' | 'previous', counter?: WireCounter): { message(last?: boolean): Promise<void>; result(): PathResult } {
  const { leases, runtime, transcripts, usage, subagentRuns } = rig;
  const never = new AbortController().signal;
  const count = () => counter?.count() ?? 0;
  const ms: number[][] = MESSAGE_STEPS.map(() => []);
  const trips = MESSAGE_STEPS.map(() => 0);
  const totals: number[] = [];
  let totalTrips = 0;
  let totalStatements = 0;
  let totalCommits = 0;
  let n = 0;
  let counted = 0;
  const message = async (last = false) => {
    const key = `agent:main:slack:direct:${label}:${mode}:U${n++ % 20}`;
    const name = `session:${key}`;
    // The turn's calls are metered for its conversation, as the turn loop's are.
    const provider = usage.wrap(MODEL, { agentId: 'main', sessionKey: key, platform: 'slack', senderId: 'U1', purpose: 'turn' });
    const wire = () => [counter?.statements() ?? 0, counter?.commits() ?? 0] as const;
    const first = wire();
    const marks: Array<[number, number]> = [[performance.now(), count()]];
    const mark = () => marks.push([performance.now(), count()]);
    const recorded = (_: void, m: typeof marks) => {
      const last = wire();
      return record(undefined, m, last[0] - first[0], last[1] - first[1]);
    };
    // `before`: the path as it was before the turn's start and the message joined the place (the same calls otherwise).
    // `previous`: the path of the previous round, statement for statement (`previousMessage`).
    if (mode === 'previous') return recorded(await previousMessage(rig, key, name, mark, last), marks);
    const read = mode === 'before' ? undefined : runtime.startRead!(key, incomingAppend({ text: SAID, senderName: 'alice' }, BENCH_TURN));
    const place = await leases.place(name, JSON.stringify({ text: SAID }), true, read?.steps, read?.write);
    const start = place.lease && place.alongside && read ? await read.read(place.alongside) : undefined;
    const seq = place.written && read?.writtenSeq ? read.writtenSeq(place.written) : undefined;
    if (!place.lease || (mode !== 'before' && (!start || seq === undefined))) throw new Error('bench: the idle conversation was not leased with its place, or its message not written');
    mark();
    await leases.hold(
      name,
      never,
      async (signal, lease) => {
        mark();
        if (mode === 'agent') {
          const outcome = await runtime.runTurn({ sessionKey: key, turn: BENCH_TURN, input: { text: SAID, senderName: 'alice' }, signal, start: lease === place.lease ? start : undefined, written: { seq } });
          if (outcome.status !== 'completed') throw new Error(`bench turn ${outcome.status}`);
        } else if (mode === 'before') {
          // The transcript read with the results probe (asked together), the message, then the answer.
          const [entries] = await Promise.all([transcripts.load(key), subagentRuns.anyUndelivered(key)]);
          await transcripts.append(key, [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text: SAID }] }, sender: { id: 'U1', name: 'alice' } }]);
          const response = await provider.complete({ model: 'm', system: '', messages: entries.map((e) => e.message), tools: [], maxOutputTokens: 100 }, signal);
          await transcripts.append(key, [{ kind: 'message', message: response.message }]);
        } else {
          // The message was written with its place (and read back with the transcript, the
          // session's activity time with it): the answer alone, its usage record riding with it.
          const response = await provider.complete({ model: 'm', system: '', messages: [...start!.entries.map((e) => e.message)], tools: [], maxOutputTokens: 100 }, signal);
          await transcripts.append(key, [{ kind: 'message', message: response.message }], { touch: false });
        }
        mark();
      },
      place.seq,
      undefined,
      place.lease,
    );
    if (last) await leases.flush();
    mark();
    recorded(undefined, marks);
  };
  const record = (_: void, marks: Array<[number, number]>, statements: number, commits: number) => {
    if (n <= 50) return;
    counted++;
    totalStatements += statements;
    totalCommits += commits;
    for (let i = 0; i < MESSAGE_STEPS.length; i++) {
      ms[i]!.push(marks[i + 1]![0] - marks[i]![0]);
      trips[i]! += marks[i + 1]![1] - marks[i]![1];
    }
    totals.push(marks.at(-1)![0] - marks[0]![0]);
    totalTrips += marks.at(-1)![1] - marks[0]![1];
  };
  return {
    message,
    result: () => ({
      steps: MESSAGE_STEPS.map((_, i) => ({ p50: summarize(ms[i]!).p50, trips: trips[i]! / counted })),
      total: { p50: summarize(totals).p50, trips: totalTrips / counted, statements: totalStatements / counted, commits: totalCommits / counted },
    }),
  };
}

const PREVIOUS_TOUCH = `INSERT INTO sessions (key, agent_id, provider, created_at, updated_at) VALUES (@key, @agentId, @provider, @now, @now)
  ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at`;
const PREVIOUS_INSERT = `WITH e AS (INSERT INTO transcript_entries (session_key, role, tool, tool_call_id, content, details, is_error, created_at)
  VALUES (@sessionKey, @role, @tool, @toolCallId, @content, @details, @isError, @createdAt) RETURNING id),
  s AS (INSERT INTO transcript_search (entry_id, session_key, body) SELECT id, @sessionKey, @body FROM e)
  SELECT id FROM e`;
/**
 * A message's store work as the previous round made it, statement for statement, through the
 * same calls as now where they did not change: the place with the lease, the message and the
 * turn's first read; the answer through the usage service, its record issued as a write of its
 * own (its own commit: metered without a conversation, nothing carries it) beside the answer's
 * write, which touches the session again; the release, by `hold`, in three statements
 * (`PreviousLeases`).
 */
async function previousMessage(rig: MessageRig, key: string, name: string, mark: () => void, last: boolean): Promise<void> {
  const { leases, runtime, db, usage } = rig;
  const read = runtime.startRead!(key, incomingAppend({ text: SAID, senderName: 'alice' }, BENCH_TURN));
  const place = await leases.place(name, JSON.stringify({ text: SAID }), true, read?.steps, read?.write);
  const start = place.lease && place.alongside && read ? await read.read(place.alongside) : undefined;
  if (!place.lease || !start) throw new Error('bench: the idle conversation was not leased with its place');
  mark();
  const provider = usage.wrap(MODEL, { agentId: 'main', platform: 'slack', senderId: 'U1', purpose: 'turn' });
  const never = new AbortController().signal;
  await leases.hold(
    name,
    never,
    async (signal) => {
      mark();
      const response = await provider.complete({ model: 'm', system: '', messages: start.entries.map((e) => e.message), tools: [], maxOutputTokens: 100 }, signal);
      const now = Date.now();
      await db.batch([
        { sql: PREVIOUS_TOUCH, params: { key, agentId: 'main', provider: 'slack', now } },
        {
          sql: PREVIOUS_INSERT,
          params: { sessionKey: key, role: 'assistant', tool: null, toolCallId: null, content: JSON.stringify(response.message.content), details: null, isError: 0, createdAt: now, body: 'notes.md and plan.txt' },
        },
      ]);
      mark();
    },
    place.seq,
    undefined,
    place.lease,
  );
  if (last) await leases.flush();
  mark();
}

/**
 * Messages in a stream: each path's messages come in streams of this many back to back (the
 * next one's place right after the previous one is done), as an instance's messages come when
 * they come faster than a lease's release lingers (`RELEASE_LINGER_MS`). A release a place
 * carries is counted in the message whose place carries it; the stream's last release, which
 * nothing carries, is counted in the last message: per message, amortized over the stream.
 */
export const STREAM = Number(process.env.WARDEN_BENCH_STREAM ?? 10);

/** Message paths measured in alternation, a stream of each in turn (`STREAM`), so the machine's load falls on all alike. */
export async function interleaved(paths: ReadonlyArray<ReturnType<typeof messagePath>>, messages = 350): Promise<PathResult[]> {
  for (let i = 0; i < messages; i += STREAM) for (const path of paths) for (let j = 0; j < STREAM; j++) await path.message(j === STREAM - 1);
  return paths.map((p) => p.result());
}

async function waitUntil(check: () => boolean, ms: number, every = 20): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('benchmark condition not met in time');
    await new Promise((r) => setTimeout(r, every));
  }
}

const bench: Bench = async (report) => {
  const cluster = await startTestCluster({ shared_preload_libraries: 'pg_stat_statements' });
  const fake = await startSlackFake();
  const model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: 'ok' }), keepBodies: false });
  // WARDEN_BENCH_CLUSTER=store: only the store rows (a turn's store work), for quick comparisons.
  const storeOnly = process.env.WARDEN_BENCH_CLUSTER === 'store';
  try {
    // `WARDEN_BENCH_CLUSTER=io` runs the I/O-bound scaling rows alone.
    const deliveries: Delivery[] = storeOnly || process.env.WARDEN_BENCH_CLUSTER === 'io' ? [] : ['round-robin', 'sticky'];
    const runs = new Map<string, ThroughputRun[]>();
    const key = (delivery: Delivery, count: number) => `${delivery} ${count}`;
    const load0 = loadAverage();
    // Interleaved: every round runs every delivery and count, the counts' order reversed in odd
    // rounds, so a change in the machine's load falls on all of them alike.
    for (let round = 0; round < (deliveries.length > 0 ? ROUNDS : 0); round++) {
      for (const delivery of deliveries) {
        for (const count of round % 2 === 0 ? COUNTS : [...COUNTS].reverse()) {
          const run = await throughput(fake, model, cluster.url, count, delivery);
          runs.set(key(delivery, count), [...(runs.get(key(delivery, count)) ?? []), run]);
        }
      }
    }
    const us = (x: number) => x.toFixed(0);
    for (const delivery of deliveries) {
      const ones = runs.get(key(delivery, 1))!;
      for (const count of COUNTS) {
        const these = runs.get(key(delivery, count))!;
        const ratios = these.map((r, i) => r.rate / ones[i]!.rate);
        const at = (pick: (r: ThroughputRun) => number) => median(these.map(pick));
        const target =
          count === 1
            ? `target ≥ ${TARGET_ONE}; ${ROUNDS} rounds, ${spread(these.map((r) => r.rate), (x) => x.toFixed(1))}`
            : `${fmtRatio(median(ratios))} of 1 instance, median of ${ROUNDS} same-round ratios (${ratios.map(fmtRatio).join(', ')}); target ≥ ${fmtRatio(TARGET_RATIO)}`;
        report({
          name: `messages/s, ${count} instance${count === 1 ? '' : 's'}, ${delivery} (${MESSAGES} msgs after ${WARM}/instance warm-up, ${CONVERSATIONS} convs)`,
          value: at((r) => r.rate).toFixed(1),
          note: `${count === 1 ? 'baseline; ' : ''}${target}; CPU µs/msg: instances ${us(at((r) => r.instanceUs))}, PostgreSQL ${us(at((r) => r.postgresUs))}, harness ${us(at((r) => r.harnessUs))}; ${at((r) => r.statements).toFixed(1)} statements/msg`,
        });
      }
    }
    if (deliveries.length > 0) {
      // The earlier method, from the same runs: a process still compiling its hot paths.
      const cold = (delivery: Delivery, count: number) => median(runs.get(key(delivery, count))!.map((r) => r.cold));
      const coldRatio = (delivery: Delivery) => median(runs.get(key(delivery, 2))?.map((r, i) => r.cold / runs.get(key(delivery, 1))![i]!.cold) ?? [NaN]);
      report({
        name: `messages/s, 1 instance, round-robin, cold (${COLD_MESSAGES} msgs after 1 warm-up, the earlier method)`,
        value: cold('round-robin', 1).toFixed(1),
        note: `baseline of the method: sticky ${cold('sticky', 1).toFixed(1)}${COUNTS.includes(2) ? `; 2 instances ${fmtRatio(coldRatio('round-robin'))} round-robin, ${fmtRatio(coldRatio('sticky'))} sticky` : ''}; load average ${load0} at the start, ${loadAverage()} at the end`,
      });
    }
    // Multi-core scaling, by simulation: this machine's two cores also run PostgreSQL, the fakes
    // and the bench, so pinning each instance to a core of its own (taskset) is not possible here.
    // Instead the model's answer costs fixed wall time (an I/O-bound model, as a remote LLM is),
    // and each instance has a fixed number of conversations in flight (closed loop: a
    // conversation sends its next message once answered). Two instances with twice the
    // conversations should then answer twice as many messages per second.
    const slow = storeOnly ? undefined : await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: 'ok', delayMs: MODEL_MS }) });
    if (slow) {
      try {
        const io: number[][] = [[], []];
        for (let round = 0; round < ROUNDS; round++) for (const count of [1, 2]) io[count - 1]!.push(await closedLoop(fake, cluster.url, slow.url, count));
        const [one, two] = io.map((rates) => median(rates)) as [number, number];
        const how = `model answers after ${MODEL_MS} ms; ${IN_FLIGHT} conversations in flight per instance, round-robin, ${IO_ROUNDS} messages each`;
        report({ name: 'messages/s, I/O-bound model, 1 instance', value: one.toFixed(1), note: `baseline (ideal ${((IN_FLIGHT * 1000) / MODEL_MS).toFixed(1)}); ${how}` });
        report({
          name: 'messages/s, I/O-bound model, 2 instances, 2× in flight',
          value: two.toFixed(1),
          note: `${fmtRatio(two / one)} of 1 instance (target ≥ ${fmtRatio(TARGET_SCALING)}, simulated multi-core scaling)`,
        });
      } finally {
        await slow.close();
      }
    }
    // `WARDEN_BENCH_CLUSTER=throughput` stops after the messages/s rows (a quick look at the cluster alone).
    if (process.env.WARDEN_BENCH_CLUSTER === 'throughput' || process.env.WARDEN_BENCH_CLUSTER === 'io') return;
    if (!storeOnly) {
      const clicks = await clickToResult(fake, cluster.url);
      const same = summarize(clicks.same).p50;
      const other = summarize(clicks.other).p50;
      report({ name: 'click → result p50, click at the posting instance', value: fmtMs(same), note: `${clicks.same.length} clicks` });
      report({ name: 'click → result p50, click at another instance', value: fmtMs(other), note: `${fmtRatio(other / same)} of same-instance` });
    }

    const sqlite = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-bench-sqlite-')) });
    const postgres = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-bench-pg-')), url: await freshDatabase(cluster.url) });
    // The previous round's path in a database of its own on the same server (the schema is this round's).
    const previous = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-bench-pg-previous-')), url: await freshDatabase(cluster.url) });
    if (!sqlite.ok || !postgres.ok || !previous.ok) throw new Error('bench stores did not open');
    const counter = roundTrips(Number(new URL(cluster.url).port));
    try {
      const onSqlite = await turnStoreCost(sqlite.store, undefined, 'plain');
      // The turn rows as they were measured: each release a write of its own (or passed on, `kept`).
      const leases = new Leases(postgres.store.db, { ttlMs: 15_000, holder: 'bench', releaseLingerMs: 0 });
      // What one round trip costs on this machine now (the unit the store work is made of).
      const bare = await measure(() => postgres.store.db.value('SELECT 1'), { iterations: 300, warmup: 50 });
      const onPostgres = await turnStoreCost(postgres.store, undefined, 'plain', counter);
      const oneByOne = await turnStoreCost(postgres.store, leases, 'one-by-one', counter);
      const withLease = await turnStoreCost(postgres.store, leases, 'leased', counter);
      const kept = await turnStoreCost(postgres.store, leases, 'kept', counter);
      await leases.close();
      // A message's path (place → lease → turn → release), on both engines in this run.
      const sqliteRig = messageRig(sqlite.store);
      const postgresRig = messageRig(postgres.store);
      const previousRig = messageRig(previous.store, true);
      // This path with each release in a write of its own (as before releases lingered), on the same database.
      const atOnceRig = messageRig(postgres.store, false, true);
      const [sqliteSteps, before, prior, atOnce, steps, sqliteAgent, agent] = await interleaved([
        messagePath(sqliteRig, 'sqlite', 'steps'),
        messagePath(postgresRig, 'pg', 'before', counter),
        messagePath(previousRig, 'pg', 'previous', counter),
        messagePath(atOnceRig, 'pg-at-once', 'steps', counter),
        messagePath(postgresRig, 'pg', 'steps', counter),
        messagePath(sqliteRig, 'sqlite', 'agent'),
        messagePath(postgresRig, 'pg', 'agent', counter),
      ]) as [PathResult, PathResult, PathResult, PathResult, PathResult, PathResult, PathResult];
      await Promise.all([sqliteRig.close(), postgresRig.close(), previousRig.close(), atOnceRig.close()]);
      const trips = (t: { trips: number }) => `${t.trips.toFixed(1)} round trips`;
      const wire = (t: PathResult['total']) => `${trips(t)}, ${t.statements.toFixed(1)} statements, ${t.commits.toFixed(1)} commits`;
      const target = `target ≤ ${fmtMs(TARGET_TURN_MS)}`;
      report({ name: 'one round trip p50, PostgreSQL (loopback, SELECT 1)', value: fmtMs(bare.p50), note: 'the unit below' });
      // The headline: a message's store work on the path a real message takes, step by step.
      MESSAGE_STEPS.forEach((step, i) => report({ name: `  message step: ${step}`, value: fmtMs(steps.steps[i]!.p50), note: `${trips(steps.steps[i]!)}; SQLite ${fmtMs(sqliteSteps.steps[i]!.p50)}` }));
      report({ name: "a message's store work p50, SQLite (place → release)", value: fmtMs(sqliteSteps.total.p50), note: 'baseline' });
      report({
        name: '… PostgreSQL + lease, turn start apart (as before)',
        value: fmtMs(before.total.p50),
        note: `baseline (place, then transcript read, message, answer); ${trips(before.total)}`,
      });
      report({
        name: '… PostgreSQL + lease, as the previous round',
        value: fmtMs(prior.total.p50),
        note: `baseline (the answer's write touches the session again; the usage record commits alone; the release in three statements); ${wire(prior.total)}; steps ${prior.steps.map((t) => fmtMs(t.p50)).join(' / ')}`,
      });
      report({
        name: '… PostgreSQL + lease, each release a write of its own',
        value: fmtMs(atOnce.total.p50),
        note: `baseline (the same path, its release not lingering for the next write); ${wire(atOnce.total)}; steps ${atOnce.steps.map((t) => fmtMs(t.p50)).join(' / ')}`,
      });
      report({
        name: "a message's store work p50, PostgreSQL + lease (place → release)",
        value: fmtMs(steps.total.p50),
        note: `${fmtRatio(steps.total.p50 / atOnce.total.p50)} of each release alone, ${fmtRatio(steps.total.p50 / prior.total.p50)} of the previous round, ${fmtRatio(steps.total.p50 / before.total.p50)} of as before, ${fmtRatio(steps.total.p50 / sqliteSteps.total.p50)} of SQLite; ${wire(steps.total)} (${(steps.total.p50 / bare.p50).toFixed(1)} × one), streams of ${STREAM} (the release carried by the next message's place); ${target}`,
      });
      report({ name: '… through the agent loop, SQLite', value: fmtMs(sqliteAgent.total.p50), note: 'baseline (adds the loop\'s own work: prompt, surface, projection)' });
      report({
        name: '… through the agent loop, PostgreSQL + lease',
        value: fmtMs(agent.total.p50),
        note: `${fmtRatio(agent.total.p50 / sqliteAgent.total.p50)} of SQLite; ${wire(agent.total)} (turn ${trips(agent.steps[2]!)})`,
      });
      report({ name: "a turn's store work p50, SQLite (no lease)", value: fmtMs(onSqlite.p50), note: 'baseline' });
      report({ name: "a turn's store work p50, PostgreSQL (loopback, no lease)", value: fmtMs(onPostgres.p50), note: `${fmtRatio(onPostgres.p50 / onSqlite.p50)} of SQLite; ${trips(onPostgres)}` });
      report({
        name: '… PostgreSQL + session lease, statement by statement',
        value: fmtMs(oneByOne.p50),
        note: `baseline (each statement awaited, as before batching); ${trips(oneByOne)}`,
      });
      report({
        name: '… lease by acquire (hold, no place)',
        value: fmtMs(withLease.p50),
        note: `${fmtRatio(withLease.p50 / oneByOne.p50)} of statement by statement; ${trips(withLease)} (${(withLease.p50 / bare.p50).toFixed(1)} × one)`,
      });
      report({
        name: '… next turn queued here (lease passed on in the release)',
        value: fmtMs(kept.p50),
        note: `${fmtRatio(kept.p50 / oneByOne.p50)} of statement by statement; ${trips(kept)} (${(kept.p50 / bare.p50).toFixed(1)} × one)`,
      });
    } finally {
      counter.stop();
      await sqlite.store.close();
      await postgres.store.close();
      await previous.store.close();
    }
  } finally {
    await model.close();
    await fake.close();
    await cluster.stop();
  }
};

export default bench;
