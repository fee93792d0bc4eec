// Two `warden start` processes on one PostgreSQL database behind the Slack fake: a card one
// instance posted is decided by a click that reaches the other, exactly once, and the command
// runs once, in the instance whose call waited for it (told by notification, not by polling).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openWardenStore } from '../../src/app/migrations.js';
import { freshStoreTarget } from '../store-engines.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { ALICE, DEV, OLGA, cardFor, click, mention, runsIn, sharedWorkspace, startInstance, stopInstance, type Instance } from './harness.js';

let fake: SlackFake;
const instances: Instance[] = [];

beforeAll(async () => {
  fake = await startSlackFake();
});
afterEach(async () => {
  await Promise.all(instances.splice(0).map(stopInstance));
});
afterAll(async () => {
  await fake?.close();
});

describe('two instances on one PostgreSQL', () => {
  it('a card posted by A and clicked at B is decided once; the command runs once; a second click at A is already resolved', async () => {
    const { url } = await freshStoreTarget('postgres');
    const workspace = sharedWorkspace();
    // The call waits in its turn (not deferred) for up to a minute: the decision must reach A itself.
    const a = await startInstance('a', { fake, storeUrl: url!, workspace, leaseSec: 3, waitSec: 60 });
    instances.push(a);
    const b = await startInstance('b', { fake, storeUrl: url!, workspace, leaseSec: 3, waitSec: 60 });
    instances.push(b);

    // Both are ready on the shared store: reachable, migrations current.
    for (const i of [a, b]) {
      const ready = await fetch(`${i.opsUrl}/readyz`);
      const body = (await ready.json()) as { checks: Record<string, { ok: boolean }> };
      expect(ready.status).toBe(200);
      expect(body.checks.store?.ok).toBe(true);
      expect(body.checks.migrations?.ok).toBe(true);
    }

    expect((await mention(fake, a, ALICE, '/exec echo once >> runs.log')).status).toBe(200);
    const card = await cardFor(fake, 'echo once');
    expect(runsIn(workspace)).toBe(0);

    const clicked = Date.now();
    expect((await click(fake, b, card, 'allow-once', OLGA)).status).toBe(200);
    await fake.waitForCall('chat.update', (body) => body.ts === card.ts && JSON.stringify(body).includes(`Allowed once by <@${OLGA}>`), 30_000);
    await fake.requests.waitFor((r) => r.path === '/api/chat.postMessage' && r.body.channel === DEV && !r.body.blocks && String(r.body.text).includes('(no output)'), 30_000, 'the command result');
    const tookMs = Date.now() - clicked;
    expect(runsIn(workspace)).toBe(1);
    // A's waiting call took the decision and ran it (A polls nothing on a shared store: it was notified).
    const store = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-check-')), url });
    if (!store.ok) throw new Error(store.error.message);
    try {
      const call = await store.store.db.get<{ state: string; owner_pid: number; result: string }>('SELECT state, owner_pid, result FROM deferred_calls');
      expect(call).toMatchObject({ state: 'done', owner_pid: a.child.pid });
      expect(call!.result).toContain('handled by its own turn');
    } finally {
      await store.store.close();
    }

    // The same click again, now at A: the decision stands, nothing runs again.
    await click(fake, a, card, 'allow-once', OLGA);
    await fake.waitForCall('chat.postEphemeral', (body) => body.user === OLGA && /already resolved/.test(String(body.text)), 30_000);
    // And a click at B once more, racing nothing: still one run.
    await click(fake, b, card, 'allow-once', OLGA);
    await fake.requests.waitFor((r) => r.path === '/api/chat.postEphemeral' && r.body.user === OLGA && /already resolved/.test(String(r.body.text)) && fake.calls('chat.postEphemeral').filter((c) => /already resolved/.test(String(c.body.text))).length >= 2, 30_000, 'second refusal');
    expect(runsIn(workspace)).toBe(1);
    expect(tookMs).toBeLessThan(30_000);
  }, 120_000);
});
