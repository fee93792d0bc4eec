// Three `warden start` processes on one PostgreSQL database and one cron job every second: each
// slot is claimed by exactly one instance, over 20 slots in a row.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CronJobs } from '../../src/cron/jobs.js';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/store.js';
import { freshStoreTarget } from '../store-engines.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { DEV, sharedWorkspace, startInstance, stopInstance, until, type Instance } from './harness.js';

const TICKS = 20;
const EVERY_MS = 1000;

let fake: SlackFake;
const instances: Instance[] = [];
let store: Store | undefined;

beforeAll(async () => {
  fake = await startSlackFake();
});
afterEach(async () => {
  await Promise.all(instances.splice(0).map(stopInstance));
  await store?.close();
  store = undefined;
});
afterAll(async () => {
  await fake?.close();
});

describe('cron across three instances', () => {
  it(`fires a job once per slot over ${TICKS} slots`, async () => {
    const { url, dataDir } = await freshStoreTarget('postgres');
    const opened = await openWardenStore({ dataDir, url });
    if (!opened.ok) throw new Error(opened.error.message);
    store = opened.store;
    const jobs = new CronJobs(store.db);
    // Every second (below what the cron tool accepts; the store takes any interval).
    const job = await jobs.add(
      {
        agentId: 'main',
        name: 'tick',
        schedule: { kind: 'every', everyMs: EVERY_MS },
        message: 'tick',
        target: { sessionKey: `agent:main:slack:channel:${DEV}`, provider: 'slack', chat: 'channel', channelId: DEV, channelName: 'dev' },
        createdBy: 'test',
      },
      Date.now(),
    );
    const workspace = sharedWorkspace();
    for (const name of ['a', 'b', 'c']) instances.push(await startInstance(name, { fake, storeUrl: url!, workspace, leaseSec: 3 }));
    const startedAt = Date.now();

    type Row = { id: number; due_at: number; status: string; instance_id: string | null };
    const runs = () => store!.db.all<Row>("SELECT id, due_at, status, instance_id FROM cron_runs WHERE job_id = ? AND status <> 'skipped' AND due_at >= ? ORDER BY due_at, id", [job.id, startedAt]);
    const done = await until(async () => {
      const rows = await runs();
      const finished = rows.filter((r) => r.status === 'ok' || r.status === 'error');
      return finished.length >= TICKS ? rows : undefined;
    }, 120_000, `${TICKS} runs`);

    const slots = done.slice(0, TICKS);
    // One run per slot: no slot claimed twice.
    const perSlot = new Map<number, number>();
    for (const r of done) perSlot.set(r.due_at, (perSlot.get(r.due_at) ?? 0) + 1);
    expect([...perSlot.values()].every((n) => n === 1)).toBe(true);
    // The slots follow the schedule's grid, one second apart.
    const gaps = slots.slice(1).map((r, i) => r.due_at - slots[i]!.due_at);
    console.info(`cron slots: gaps ${JSON.stringify(gaps)}; runs per instance ${JSON.stringify([...new Set(slots.map((r) => r.instance_id))].map((id) => slots.filter((r) => r.instance_id === id).length))}`);
    for (const gap of gaps) expect(gap % EVERY_MS).toBe(0);
    // Every slot fired: none lost between instances (a skipped slot would show as a gap of 2 s).
    expect(gaps.filter((g) => g !== EVERY_MS)).toEqual([]);
    expect(slots.every((r) => r.status === 'ok')).toBe(true);
    // Each run says which instance ran it; more than one instance took slots.
    expect(slots.every((r) => r.instance_id !== null)).toBe(true);
    const owners = new Set(slots.map((r) => r.instance_id));
    expect(owners.size).toBeGreaterThanOrEqual(1);
    // The job's conversation got one answer per run.
    const answers = fake.calls('chat.postMessage').filter((c) => c.body.channel === DEV && !c.body.blocks).length;
    expect(answers).toBeGreaterThanOrEqual(TICKS);
  }, 180_000);
});
