// Several instances on one PostgreSQL database (issue 15): real `warden start` processes behind
// the Slack fake's HTTP events with a scripted OpenAI-compatible model, spread round-robin as a
// load balancer would. Measures messages per second with 1, 2 and 3 instances (ratio to one),
// click → result p50 when the click reaches the instance that posted the card vs another one,
// and a turn's store work on SQLite vs PostgreSQL (in process).
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { DbTranscriptStore } from '../src/agent/transcript.js';
import { Leases } from '../src/cluster/leases.js';
import { openWardenStore } from '../src/app/migrations.js';
import { AuditLog } from '../src/store/audit.js';
import type { Store } from '../src/store/store.js';
import { startTestCluster } from '../test/postgres-cluster.js';
import { startFakeOpenAI } from '../test/fakes/models/openai-fake.js';
import { startSlackFake, type SlackFake } from '../test/fakes/slack/index.js';
import { ALICE, OLGA, cardFor, click, directMessage, mention, sharedWorkspace, startInstance, stopInstance, type Instance } from '../test/cluster/harness.js';
import { fmtMs, fmtRatio, measure, summarize, type Bench } from './harness.js';

const MESSAGES = 90;
const CONVERSATIONS = 30;
const CLICKS = 8;

async function freshDatabase(adminUrl: string): Promise<string> {
  const admin = new URL(adminUrl);
  const name = `bench_${randomUUID().replace(/-/g, '')}`;
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  admin.pathname = `/${name}`;
  return admin.toString();
}

/** Replies posted to DMs (the turn's answer), counted once per inbound message. */
const answers = (fake: SlackFake) => fake.calls('chat.postMessage').filter((c) => String(c.body.channel).startsWith('D') && !c.body.blocks).length;

async function throughput(fake: SlackFake, adminUrl: string, modelUrl: string, count: number): Promise<number> {
  const storeUrl = await freshDatabase(adminUrl);
  const workspace = sharedWorkspace();
  const instances: Instance[] = [];
  try {
    for (let i = 0; i < count; i++) instances.push(await startInstance(`bench${i}`, { fake, storeUrl, workspace, leaseSec: 15, modelUrl }));
    // Warm-up: one turn per instance.
    const warm = answers(fake) + count;
    await Promise.all(instances.map((inst, i) => directMessage(fake, inst, `U0WARM${i}`, 'hello')));
    await waitUntil(() => answers(fake) >= warm, 60_000);
    const goal = answers(fake) + MESSAGES;
    const started = performance.now();
    const sends: Promise<Response>[] = [];
    for (let m = 0; m < MESSAGES; m++) sends.push(directMessage(fake, instances[m % count]!, `U0USER${String(m % CONVERSATIONS).padStart(3, '0')}`, `message ${m}`));
    await Promise.all(sends);
    await waitUntil(() => answers(fake) >= goal, 180_000);
    return MESSAGES / ((performance.now() - started) / 1000);
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

/** A turn's store work as the agent does it: read the transcript, append the exchange, audit the turn. */
async function turnStoreCost(store: Store, lease: Leases | undefined): Promise<number> {
  const transcripts = new DbTranscriptStore(store.db);
  const audit = new AuditLog(store.db);
  let n = 0;
  const timing = await measure(
    async () => {
      const key = `agent:main:slack:direct:U${n++ % 20}`;
      const held = lease ? await lease.tryAcquire(`session:${key}`) : undefined;
      await transcripts.load(key);
      await transcripts.append(key, [
        { message: { role: 'user', content: [{ type: 'text', text: 'what is in the workspace?' }] } },
        { message: { role: 'assistant', content: [{ type: 'text', text: 'notes.md and plan.txt' }] } },
      ] as Parameters<DbTranscriptStore['append']>[1]);
      await audit.record({ type: 'turn.finished', subject: key, data: { rounds: 1 } });
      if (held) await lease!.release(held);
    },
    { iterations: 300, warmup: 50 },
  );
  return timing.p50;
}

async function waitUntil(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('benchmark condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const bench: Bench = async (report) => {
  const cluster = await startTestCluster();
  const fake = await startSlackFake();
  const model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: 'ok' }) });
  try {
    const perSecond: number[] = [];
    for (const count of [1, 2, 3]) {
      const rate = await throughput(fake, cluster.url, model.url, count);
      perSecond.push(rate);
      report({ name: `messages/s, ${count} instance${count === 1 ? '' : 's'} (${MESSAGES} msgs, ${CONVERSATIONS} conversations)`, value: rate.toFixed(1), note: count === 1 ? 'baseline' : `${fmtRatio(rate / perSecond[0]!)} of 1 instance` });
    }
    const clicks = await clickToResult(fake, cluster.url);
    const same = summarize(clicks.same).p50;
    const other = summarize(clicks.other).p50;
    report({ name: 'click → result p50, click at the posting instance', value: fmtMs(same), note: `${clicks.same.length} clicks` });
    report({ name: 'click → result p50, click at another instance', value: fmtMs(other), note: `${fmtRatio(other / same)} of same-instance` });

    const sqlite = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-bench-sqlite-')) });
    const postgres = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-bench-pg-')), url: await freshDatabase(cluster.url) });
    if (!sqlite.ok || !postgres.ok) throw new Error('bench stores did not open');
    try {
      const onSqlite = await turnStoreCost(sqlite.store, undefined);
      const leases = new Leases(postgres.store.db, { ttlMs: 15_000, holder: 'bench' });
      const onPostgres = await turnStoreCost(postgres.store, undefined);
      const withLease = await turnStoreCost(postgres.store, leases);
      await leases.close();
      report({ name: "a turn's store work p50, SQLite", value: fmtMs(onSqlite), note: 'baseline' });
      report({ name: "a turn's store work p50, PostgreSQL (loopback)", value: fmtMs(onPostgres), note: `${fmtRatio(onPostgres / onSqlite)} of SQLite` });
      report({ name: "a turn's store work p50, PostgreSQL + session lease", value: fmtMs(withLease), note: `${fmtRatio(withLease / onSqlite)} of SQLite` });
    } finally {
      await sqlite.store.close();
      await postgres.store.close();
    }
  } finally {
    await model.close();
    await fake.close();
    await cluster.stop();
  }
};

export default bench;
