import { statSync, writeFileSync, chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openStore, type Store } from './store.js';
import { SecretStore, secretsKey, secretsMigrations } from './secret-store.js';

const opened: Store[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

describe.each(ENGINES)('secret store on %s', (engine) => {
  const open = async () => {
    const where = await freshStoreTarget(engine);
    const result = await openStore({ dataDir: where.dataDir, url: where.url, migrations: [secretsMigrations] });
    if (!result.ok) throw new Error(result.error.message);
    opened.push(result.store);
    return result.store;
  };

  it('stores ciphertext only; reads back the conversation value before the agent one', async () => {
    const store = await open();
    const key = randomBytes(32);
    const secrets = new SecretStore(store.db, key);
    await secrets.set({ agentId: 'main', name: 'API_KEY', value: 'agent-wide-Value-123' });
    await secrets.set({ agentId: 'main', scope: 'sess-1', name: 'API_KEY', value: 'conversation-Value-456' });
    expect(await secrets.get('main', 'API_KEY', 'sess-1')).toBe('conversation-Value-456');
    expect(await secrets.get('main', 'API_KEY', 'sess-2')).toBe('agent-wide-Value-123');
    expect(await secrets.get('other', 'API_KEY')).toBeUndefined();
    const raw = JSON.stringify(await store.db.all('SELECT * FROM secret_values'));
    expect(raw).not.toContain('Value-123');
    expect(raw).not.toContain(Buffer.from('agent-wide-Value-123').toString('base64').slice(0, 12));
    expect((await secrets.list({ agentId: 'main' })).map((e) => [e.name, e.scope])).toEqual([['API_KEY', ''], ['API_KEY', 'sess-1']]);
  });

  it('replaces a value in one write; removes it', async () => {
    const store = await open();
    const secrets = new SecretStore(store.db, randomBytes(32));
    await Promise.all([secrets.set({ agentId: 'main', name: 'T', value: 'first-value' }), secrets.set({ agentId: 'main', name: 'T', value: 'second-value' })]);
    expect(await secrets.list()).toHaveLength(1);
    expect(['first-value', 'second-value']).toContain(await secrets.get('main', 'T'));
    expect(await secrets.remove('main', 'T')).toBe(true);
    expect(await secrets.remove('main', 'T')).toBe(false);
  });

  it('a wrong key or a ciphertext moved to another row does not decrypt', async () => {
    const store = await open();
    const secrets = new SecretStore(store.db, randomBytes(32));
    await secrets.set({ agentId: 'main', name: 'A', value: 'value-of-a' });
    await expect(new SecretStore(store.db, randomBytes(32)).get('main', 'A')).rejects.toThrow(/does not decrypt/);
    await store.db.run("UPDATE secret_values SET name = 'B' WHERE name = 'A'");
    await expect(secrets.get('main', 'B')).rejects.toThrow(/does not decrypt/);
    expect(await new SecretStore(store.db, randomBytes(32)).all()).toEqual([]);
  });
});

describe('the store key', () => {
  const dir = () => mkdtempSync(path.join(tmpdir(), 'warden-secrets-key-'));
  it.each([
    ['base64', randomBytes(32).toString('base64'), true],
    ['hex', randomBytes(32).toString('hex'), true],
    ['too short', randomBytes(16).toString('base64'), false],
    ['not base64', 'not a key at all', false],
  ])('WARDEN_SECRETS_KEY as %s', (_what, value, ok) => {
    expect(secretsKey(dir(), { WARDEN_SECRETS_KEY: value }).ok).toBe(ok);
  });
  it('is generated once in the data dir, mode 600, and read back', () => {
    const d = dir();
    const first = secretsKey(d, {});
    if (!first.ok) throw new Error(first.error);
    expect(first.created).toBe(true);
    expect(statSync(first.file!).mode & 0o777).toBe(0o600);
    const again = secretsKey(d, {});
    expect(again.ok && again.key.equals(first.key) && again.created === false).toBe(true);
  });
  it('a key file others can read is refused', () => {
    const d = dir();
    writeFileSync(path.join(d, 'secrets.key'), randomBytes(32).toString('base64'));
    chmodSync(path.join(d, 'secrets.key'), 0o644);
    const key = secretsKey(d, {});
    expect(key.ok).toBe(false);
    expect(!key.ok && key.error).toMatch(/chmod 600/);
  });
  it('names must be environment variable names', async () => {
    const result = await openStore({ dataDir: dir(), migrations: [secretsMigrations] });
    if (!result.ok) throw new Error(result.error.message);
    opened.push(result.store);
    await expect(new SecretStore(result.store.db, randomBytes(32)).set({ agentId: 'main', name: 'bad name', value: 'x' })).rejects.toThrow(/environment variable name/);
  });
});
