// An instance killed outright (SIGKILL) while its card waits: the other instance on the same
// PostgreSQL database takes the request over within the lease bound — the card is edited to say
// so and nothing stays pending — and a conversation whose turn it held moves on.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/store.js';
import { freshStoreTarget } from '../store-engines.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { ALICE, DEV, OLGA, cardFor, click, mention, runsIn, sharedWorkspace, startInstance, stopInstance, until, type Instance } from './harness.js';

const LEASE_SEC = 2;
/** What the design promises: the lease, one heartbeat period, the 1 s sweep for other instances' requests. */
const BOUND_MS = LEASE_SEC * 1000 + (LEASE_SEC * 1000) / 3 + 1000;
/** Slack for a loaded two-core machine: process scheduling and the fake's HTTP round trips. */
const SLACK_MS = 3000;

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

describe('SIGKILL of an instance mid-approval', () => {
  it(`the other instance takes the request over within the bound: the card says so, the call runs once when decided there, the conversation moves on`, async () => {
    const { url, dataDir } = await freshStoreTarget('postgres');
    const workspace = sharedWorkspace();
    const a = await startInstance('a', { fake, storeUrl: url!, workspace, leaseSec: LEASE_SEC });
    instances.push(a);
    const b = await startInstance('b', { fake, storeUrl: url!, workspace, leaseSec: LEASE_SEC });
    instances.push(b);
    const opened = await openWardenStore({ dataDir, url });
    if (!opened.ok) throw new Error(opened.error.message);
    store = opened.store;

    await mention(fake, a, ALICE, '/exec echo killed >> runs.log');
    const card = await cardFor(fake, 'echo killed');
    const pending = await store.db.all<{ id: string }>("SELECT id FROM approvals WHERE status = 'pending'");
    expect(pending).toHaveLength(1);

    // Killed once A has recorded the card as shown (a kill between posting and recording is covered by the unit tests).
    await until(async () => (await store!.db.value('SELECT 1 FROM approvals WHERE id = ? AND rendered_at IS NOT NULL', [pending[0]!.id])) !== undefined, 30_000, 'the card recorded as shown');
    a.child.kill('SIGKILL');
    await a.child;
    const killedAt = Date.now();

    // B edits A's card within the bound: it says the call changed hands, and stays decidable.
    const edit = await fake.waitForCall('chat.update', (body) => body.ts === card.ts, BOUND_MS + SLACK_MS + 10_000).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n--- instance b ---\n${b.output()}`);
    });
    const tookMs = Date.now() - killedAt;
    console.info(`sigkill: card edited ${tookMs} ms after the kill (bound ${BOUND_MS} ms)`);
    expect(tookMs).toBeLessThan(BOUND_MS + SLACK_MS);
    expect(JSON.stringify(edit.body)).toContain('Taken over');
    const owner = await store.db.get<{ state: string }>('SELECT state FROM deferred_calls WHERE approval_id = ?', [pending[0]!.id]);
    expect(owner?.state).toBe('deferred');

    // Decided at B, the call runs once, at B; the card shows the decision.
    const refreshed = [...fake.messages.values()].find((m) => m.ts === card.ts)!;
    await click(fake, b, refreshed, 'allow-once', OLGA);
    await fake.waitForCall('chat.update', (body) => body.ts === card.ts && JSON.stringify(body).includes(`Allowed once by <@${OLGA}>`), 30_000);
    await until(() => runsIn(workspace) === 1, 30_000, 'the taken-over call to run');
    expect(await store.db.value<string>('SELECT status FROM approvals WHERE id = ?', [pending[0]!.id])).toBe('allow-once');

    // The conversation is not held by the dead instance's turn: B answers the next message.
    const before = fake.calls('chat.postMessage').length;
    await mention(fake, b, ALICE, '/exec echo after >> runs.log');
    const next = await cardFor(fake, 'echo after');
    expect(fake.calls('chat.postMessage').length).toBeGreaterThan(before);
    await click(fake, b, next, 'allow-once', OLGA);
    await until(() => runsIn(workspace) === 2, 30_000, 'the command after the take-over');
    expect(await store.db.value<number>("SELECT COUNT(*) FROM approvals WHERE status = 'pending'")).toBe(0);
  }, 120_000);
});
