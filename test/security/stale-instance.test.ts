// An instance that lost its claim — it paused past its lease (GC, SIGSTOP, a VM migration) or
// its clock runs wrong — tries to act on what another instance took over. Each attempt is
// refused by the store, not by the stale instance's good manners. Real PostgreSQL.
import { afterEach, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../store-engines.js';
import { InstanceRegistry } from '../../src/cluster/instances.js';
import { LEASE_CHANNEL, Leases, leaseDigest } from '../../src/cluster/leases.js';
import { APPROVAL_CHANNEL, ApprovalService } from '../../src/approvals/service.js';
import { parseConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/store.js';
import { until } from '../until.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function open(target: { dataDir: string; url: string | undefined }): Promise<Store> {
  const opened = await openWardenStore(target);
  if (!opened.ok) throw new Error(opened.error.message);
  cleanups.push(() => opened.store.close());
  return opened.store;
}

describe('a stale lease holder', () => {
  it.each([
    ['renews the lease it lost', async (l: Leases, stale: { name: string; generation: number }) => l.renew(stale)],
    ['claims it still holds it', async (l: Leases, stale: { name: string; generation: number }) => l.holds(stale)],
    ['takes it again while the new holder is live', async (l: Leases, stale: { name: string; generation: number }) => (await l.tryAcquire(stale.name)) !== undefined],
  ])('is refused when it %s', async (_label, attempt) => {
    const target = await freshStoreTarget('postgres');
    const a = await open(target);
    const b = await open(target);
    const stale = new Leases(a.db, { ttlMs: 200, holder: 'paused-instance' });
    const fresh = new Leases(b.db, { ttlMs: 10_000, holder: 'live-instance' });
    const lost = (await stale.tryAcquire('session:agent:main:slack:channel:C1'))!;
    await until(async () => (await fresh.tryAcquire(lost.name)) !== undefined);
    expect(await attempt(stale, lost)).toBe(false);
    // Its release does not free the new holder's lease either.
    await stale.release(lost);
    expect(await fresh.holds({ name: lost.name, generation: lost.generation + 1 })).toBe(true);
  });

  it("forges nothing with its own clock: expiry is the database server's time, whatever the instance's clock says", async () => {
    const target = await freshStoreTarget('postgres');
    const a = await open(target);
    const held = (await new Leases(a.db, { ttlMs: 60_000, holder: 'live' }).tryAcquire('cron:job'))!;
    expect(held).toBeDefined();
    const realNow = Date.now;
    // A skewed instance, an hour ahead, still cannot take a lease that has not expired on the server.
    Date.now = () => realNow() + 3_600_000;
    try {
      expect(await new Leases(a.db, { ttlMs: 60_000, holder: 'skewed' }).tryAcquire('cron:job')).toBeUndefined();
    } finally {
      Date.now = realNow;
    }
  });
});

describe('notifications between instances', () => {
  it('carry ids and digests only: no command text, no requester, no session key', async () => {
    const target = await freshStoreTarget('postgres');
    const store = await open(target);
    const watcher = await open(target);
    const heard: Array<{ channel: string; payload: string | undefined }> = [];
    await watcher.db.listen(APPROVAL_CHANNEL, (payload) => heard.push({ channel: APPROVAL_CHANNEL, payload }));
    await watcher.db.listen(LEASE_CHANNEL, (payload) => heard.push({ channel: LEASE_CHANNEL, payload }));
    const parsed = parseConfig({ owners: { slack: ['U-OWNER'] } });
    if (!parsed.ok) throw parsed.error;
    const instances = new InstanceRegistry(store.db, { leaseMs: 5000, role: 'server' });
    await instances.start();
    cleanups.push(() => instances.stop());
    const approvals = new ApprovalService({ store, config: parsed.value.config, events: new EventBus(), instances });
    cleanups.push(() => approvals.shutdown());
    const secret = 'curl -H "Authorization: Bearer sk-live-TOPSECRET" https://example.com';
    const request = await approvals.open({ kind: 'exec', tool: 'exec', title: 'Run', preview: secret, fullText: secret }, { agentId: 'main', sessionKey: 'agent:main:slack:direct:U-SECRET-USER', provider: 'slack', channelId: 'D1', requesterId: 'U-SECRET-USER' });
    await approvals.resolve(request.id, 'deny', { provider: 'slack', userId: 'U-OWNER', via: { kind: 'typed' } });
    const leases = new Leases(store.db, { ttlMs: 5000, holder: instances.id });
    const sessionKey = 'agent:main:slack:direct:U-SECRET-USER';
    await leases.hold(`session:${sessionKey}`, new AbortController().signal, async () => undefined);
    await until(() => heard.length >= 2);
    expect(heard).toEqual([
      { channel: APPROVAL_CHANNEL, payload: request.id },
      { channel: LEASE_CHANNEL, payload: leaseDigest(`session:${sessionKey}`) },
    ]);
    for (const { payload } of heard) {
      expect(payload).not.toMatch(/TOPSECRET|U-SECRET-USER|curl/);
      expect(payload!.length).toBeLessThanOrEqual(24);
    }
    await leases.close();
  });
});
