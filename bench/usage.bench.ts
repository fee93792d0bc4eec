// What the budget check adds to each model call (issue 27): a metered provider over an instant
// model — admission (one conditional write per counter), the call, settlement (the record and
// one write per counter) — against the same provider unmetered, on SQLite and on a loopback
// PostgreSQL. A turn's prompt of ~20 KB with three budgets (sender, channel, global) charged.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openWardenStore } from '../src/app/migrations.js';
import { parseConfig } from '../src/config/index.js';
import type { Message, ModelProvider, ModelRequest } from '../src/models/types.js';
import type { Store } from '../src/store/store.js';
import { UsageService, UsageStore } from '../src/usage/index.js';
import { startTestCluster } from '../test/postgres-cluster.js';
import { fmtMs, measure, type Bench } from './harness.js';

const ITERATIONS = 400;
const LIMIT_SQLITE_MS = 1;
const LIMIT_POSTGRES_MS = 5;

const instant: ModelProvider = {
  name: 'local',
  api: 'openai',
  async complete() {
    return { message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, stopReason: 'end', usage: { inputTokens: 5_000, outputTokens: 20, cachedInputTokens: 4_000 } };
  },
};

const messages: Message[] = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `message ${i} ${'lorem ipsum dolor '.repeat(27)}` }] }) as Message);
const REQUEST: ModelRequest = { model: 'm', system: 'You are Warden.', messages, tools: [], maxOutputTokens: 1024 };

const config = (() => {
  const parsed = parseConfig({
    models: { providers: { local: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', models: [{ id: 'm', cost: { input: 0.001, output: 0.001 } }] } } },
    budgets: { timeZone: 'Europe/Berlin', rules: [{ scope: 'sender', per: 'day', usd: 1_000_000 }, { scope: 'channel', per: 'month', tokens: 2_000_000_000 }, { scope: 'global', per: 'day', usd: 1_000_000, action: 'ask' }] },
  });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
})();
const noBudgets = { ...config, budgets: { timeZone: 'UTC', rules: [] } };

async function perCall(store: Store, label: string, limitMs: number, report: Parameters<Bench>[0]): Promise<void> {
  const attribution = { agentId: 'main', sessionKey: 's', platform: 'discord', senderId: 'u1', channelId: 'c1', guildId: 'g1', purpose: 'turn' };
  const signal = new AbortController().signal;
  const bare = await measure(() => instant.complete(REQUEST, signal), { iterations: ITERATIONS });
  const recorded = new UsageService({ store: new UsageStore(store.db), config: () => noBudgets }).wrap(instant, attribution);
  const recordOnly = await measure(() => recorded.complete(REQUEST, signal), { iterations: ITERATIONS });
  const metered = new UsageService({ store: new UsageStore(store.db), config: () => config }).wrap(instant, attribution);
  const checked = await measure(() => metered.complete(REQUEST, signal), { iterations: ITERATIONS });
  const added = checked.p50 - recordOnly.p50;
  report({ name: `${label}: model call, unmetered (p50)`, value: fmtMs(bare.p50) });
  report({ name: `${label}: recorded, no budget (p50 / p99)`, value: fmtMs(recordOnly.p50), note: `p99 ${fmtMs(recordOnly.p99)}` });
  report({ name: `${label}: recorded + 3 budgets checked (p50 / p99)`, value: fmtMs(checked.p50), note: `p99 ${fmtMs(checked.p99)}` });
  report({ name: `${label}: the budget check adds per call (p50)`, value: fmtMs(added), note: `${added <= limitMs ? 'within' : 'OVER'} the ${limitMs} ms target` });
  report({ name: `${label}: all usage work per call (p50)`, value: fmtMs(checked.p50 - bare.p50), note: `${checked.p50 - bare.p50 <= limitMs ? 'within' : 'OVER'} ${limitMs} ms` });
}

const bench: Bench = async (report) => {
  const sqlite = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-bench-usage-')) });
  if (!sqlite.ok) throw new Error(sqlite.error.message);
  try {
    await perCall(sqlite.store, 'SQLite', LIMIT_SQLITE_MS, report);
  } finally {
    await sqlite.store.close();
  }
  const cluster = await startTestCluster();
  try {
    const admin = new URL(cluster.url);
    const name = `bench_${randomUUID().replace(/-/g, '')}`;
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    await client.end();
    admin.pathname = `/${name}`;
    const postgres = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-bench-usage-pg-')), url: admin.toString() });
    if (!postgres.ok) throw new Error(postgres.error.message);
    try {
      await perCall(postgres.store, 'PostgreSQL (loopback)', LIMIT_POSTGRES_MS, report);
    } finally {
      await postgres.store.close();
    }
  } finally {
    cluster.stop();
  }
};

export default bench;
