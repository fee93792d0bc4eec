import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENGINES, useTestStores } from '../../test/store-engines.js';
import { scrubSecrets } from '../redact/scrub.js';
import { AuditLog } from '../store/audit.js';
import type { Db } from '../store/db.js';
import { SecretStore, secretsKey } from '../store/secret-store.js';
import { openSecrets, type SecretsRuntime } from './secret-grants.js';

/** Registrations per source, counted around the real scrubber (which keeps its state). */
const registrations = vi.hoisted(() => new Map<string, number>());
vi.mock('../redact/scrub.js', async (importActual) => {
  const actual = await importActual<typeof import('../redact/scrub.js')>();
  return {
    ...actual,
    registerKnownSecrets: (source: string, secrets: Parameters<typeof actual.registerKnownSecrets>[1]) => {
      registrations.set(source, (registrations.get(source) ?? 0) + 1);
      return actual.registerKnownSecrets(source, secrets);
    },
  };
});

const stores = useTestStores();
const running: SecretsRuntime[] = [];
afterEach(() => {
  for (const s of running.splice(0)) s.close();
  vi.restoreAllMocks();
});

/** A value no shape detector takes for a credential: only its registration hides it. */
const plainValue = () => `open-sesame-${randomUUID().slice(0, 8)}`;

async function start(db: Db, dataDir: string, unsharedLookMs = 50): Promise<{ secrets: SecretsRuntime; source: string }> {
  const source = `test:${randomUUID()}`;
  const opened = await openSecrets(db, dataDir, {}, new AuditLog(db), source, { unsharedLookMs });
  if (!opened.ok) throw new Error(opened.error);
  running.push(opened.secrets);
  return { secrets: opened.secrets, source };
}

function otherStore(db: Db, dataDir: string): SecretStore {
  const key = secretsKey(dataDir, {});
  if (!key.ok) throw new Error(key.error);
  return new SecretStore(db, key.key);
}

describe.each(ENGINES)('stored secrets on %s, registered as known secrets', (engine) => {
  it('a value set or removed through another handle on the store (another instance, or the CLI beside a running Warden) is scrubbed here by name, and no longer once removed', async () => {
    const { target, open } = await stores.fresh(engine);
    const [here, there] = [await open(), await open()];
    await start(here.db, target.dataDir);
    const elsewhere = otherStore(there.db, target.dataDir);
    const value = plainValue();
    expect(scrubSecrets(`the key is ${value}`)).toBe(`the key is ${value}`);
    await elsewhere.set({ agentId: 'main', name: 'DEPLOY_KEY', value });
    // PostgreSQL: the write's notification; SQLite: the next look (50 ms here).
    await vi.waitFor(() => expect(scrubSecrets(`the key is ${value}`)).toBe('the key is [secret:DEPLOY_KEY]'), { timeout: 10_000, interval: 20 });
    await elsewhere.remove('main', 'DEPLOY_KEY');
    await vi.waitFor(() => expect(scrubSecrets(`the key is ${value}`)).toBe(`the key is ${value}`), { timeout: 10_000, interval: 20 });
  });

  it('a value set through this process is known when the set returns its notification, without waiting for a look', async () => {
    const { target, open } = await stores.fresh(engine);
    const db = (await open()).db;
    // No look for a minute: only the notification can register it.
    await start(db, target.dataDir, 60_000);
    const value = plainValue();
    await otherStore(db, target.dataDir).set({ agentId: 'main', name: 'SAME_PROCESS', value });
    await vi.waitFor(() => expect(scrubSecrets(`x ${value}`)).toBe('x [secret:SAME_PROCESS]'), { timeout: 10_000, interval: 20 });
  });

  it('the same values are not registered again (which would empty the scrubber\'s caches of texts found clean)', async () => {
    const { target, open } = await stores.fresh(engine);
    const db = (await open()).db;
    await otherStore(db, target.dataDir).set({ agentId: 'main', name: 'ONE', value: plainValue() });
    const { secrets, source } = await start(db, target.dataDir);
    expect(registrations.get(source)).toBe(1);
    for (let i = 0; i < 5; i++) await secrets.refresh();
    // Several looks (50 ms apart) find nothing new either.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(registrations.get(source)).toBe(1);
    await otherStore(db, target.dataDir).set({ agentId: 'main', name: 'TWO', value: plainValue() });
    await vi.waitFor(() => expect(registrations.get(source)).toBe(2), { timeout: 10_000, interval: 20 });
  });
});

describe('reads of the stored values', () => {
  it('run one at a time: a refresh asked during a read waits for it and reads again after, and those asked together share that one read', async () => {
    const { target, open } = await stores.fresh('sqlite');
    const db = (await open()).db;
    const { secrets } = await start(db, target.dataDir, 60_000);
    const reads: Array<{ release: () => void; done: boolean }> = [];
    const all = SecretStore.prototype.all;
    vi.spyOn(SecretStore.prototype, 'all').mockImplementation(async function (this: SecretStore) {
      const read = { release: () => {}, done: false };
      reads.push(read);
      await new Promise<void>((resolve) => (read.release = resolve));
      const values = await all.call(this);
      read.done = true;
      return values;
    });
    const first = secrets.refresh();
    await vi.waitFor(() => expect(reads).toHaveLength(1));
    const later = [secrets.refresh(), secrets.refresh(), secrets.refresh()];
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Nothing read beside the first read.
    expect(reads).toHaveLength(1);
    reads[0]!.release();
    await first;
    await vi.waitFor(() => expect(reads).toHaveLength(2));
    reads[1]!.release();
    await Promise.all(later);
    expect(reads.map((r) => r.done)).toEqual([true, true]);
  });
});
