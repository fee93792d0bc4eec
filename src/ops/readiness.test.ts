import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WARDEN_MIGRATIONS } from '../app/migrations.js';
import { migrationsFor, openStore, type Migration } from '../store/index.js';
import { WardenMetrics } from './metrics.js';
import { adaptersCheck, migrationsCheck, readiness, shardsCheck, storeCheck, type AdapterView } from './readiness.js';

const MIGRATIONS = migrationsFor('sqlite', WARDEN_MIGRATIONS);

const openTemp = async (migrations: readonly Migration[] = MIGRATIONS) => {
  const opened = await openStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-ready-')), migrations });
  if (!opened.ok) throw new Error(opened.error.message);
  return opened.store;
};

describe('readiness', () => {
  it('is ready only when every check is, and a check that throws fails naming the error', async () => {
    expect(await readiness({ a: () => ({ ok: true }), b: () => ({ ok: true }) })).toEqual({ ready: true, checks: { a: { ok: true }, b: { ok: true } } });
    expect(
      await readiness({
        a: () => ({ ok: true }),
        b: () => {
          throw new Error('disk gone');
        },
      }),
    ).toEqual({ ready: false, checks: { a: { ok: true }, b: { ok: false, reason: 'disk gone' } } });
  });

  it('the store check queries the real database, timed, and fails once it is closed', async () => {
    const store = await openTemp();
    const metrics = new WardenMetrics();
    expect(await storeCheck(store.db, metrics)).toEqual({ ok: true });
    expect((await metrics.storeSeconds.get()).values.find((v) => v.metricName === 'warden_store_operation_seconds_count' && v.labels.operation === 'ping')?.value).toBe(1);
    await store.close();
    expect(await storeCheck(store.db, metrics)).toEqual({ ok: false, reason: 'the store is closed' });
  });

  it('the migrations check names what this build knows and the store has not applied', async () => {
    const older = MIGRATIONS.slice(0, -1);
    const store = await openTemp(older);
    expect(await migrationsCheck(store.db, older)).toEqual({ ok: true });
    expect(await migrationsCheck(store.db, MIGRATIONS)).toEqual({ ok: false, reason: `migrations not applied: ${MIGRATIONS.at(-1)!.id}` });
    await store.close();
    expect(await migrationsCheck(store.db, MIGRATIONS)).toEqual({ ok: false, reason: 'the store is closed' });
  });

  it.each<[string, boolean, AdapterView[], ReturnType<typeof adaptersCheck>]>([
    ['every platform up', true, [{ provider: 'discord', state: 'running', connected: true }, { provider: 'web', state: 'running', connected: undefined }], { ok: true }],
    ['no platform (commands only)', true, [], { ok: true }],
    ['starting or stopping', false, [{ provider: 'web', state: 'running', connected: undefined }], { ok: false, reason: 'the gateway is not accepting messages (starting or stopping)' }],
    ['a platform unreachable at start', true, [{ provider: 'discord', state: 'retrying', connected: false }], { ok: false, reason: 'discord unreachable, retrying' }],
    ['a platform that dropped its connection', true, [{ provider: 'slack', state: 'running', connected: false }, { provider: 'discord', state: 'running', connected: true }], { ok: false, reason: 'slack not connected' }],
    ['two down', true, [{ provider: 'slack', state: 'running', connected: false }, { provider: 'discord', state: 'retrying', connected: false }], { ok: false, reason: 'slack not connected; discord unreachable, retrying' }],
  ])('adapters: %s', (_name, accepting, adapters, expected) => {
    expect(adaptersCheck(accepting, adapters)).toEqual(expected);
  });

  const shard = (id: number, status: string, reconnects = 0) => ({ id, status, pingMs: undefined, reconnects });
  it.each([
    ['every shard ready', [shard(0, 'ready'), shard(1, 'ready', 2)], { ok: true, detail: 'discord (2 shards: #0 ready; #1 ready, 2 reconnects)' }],
    ['a shard resuming', [shard(0, 'ready'), shard(1, 'resuming', 1)], { ok: false, reason: 'discord shard 1 resuming: discord (2 shards: #0 ready; #1 resuming, 1 reconnect)' }],
    ['a shard given up', [shard(0, 'disconnected'), shard(1, 'ready')], { ok: false, reason: 'discord shard 0 disconnected: discord (2 shards: #0 disconnected; #1 ready)' }],
  ])('shards: %s', (_name, shards, expected) => {
    expect(shardsCheck('discord', shards)).toEqual(expected);
  });
});
