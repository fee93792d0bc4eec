import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openWardenStore, WARDEN_MIGRATIONS } from '../app/migrations.js';
import { AuditLog } from './audit.js';
import { DATABASE_FILE, resolveDataDir } from './data-dir.js';
import type { StoreEngine } from './db.js';
import { applyMigrations, migrationsFor, type Migration } from './migrations.js';
import { memoryDb, openStore, type Store } from './store.js';
import { Transcripts } from './transcript.js';

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'warden-store-'));

const open: Store[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** Opens the store at `where` with `migrations` (every feature's by default); closed after the test. */
async function openAt(where: { dataDir: string; url: string | undefined }, migrations: readonly Migration[] = migrationsFor(where.url ? 'postgres' : 'sqlite', WARDEN_MIGRATIONS)): Promise<Store> {
  const result = await openStore({ dataDir: where.dataDir, url: where.url, migrations });
  if (!result.ok) throw new Error(result.error.message);
  open.push(result.store);
  return result.store;
}

const fresh = async (engine: StoreEngine, migrations?: readonly Migration[]) => openAt(await freshStoreTarget(engine), migrations);

describe('resolveDataDir', () => {
  it.each([
    [{ WARDEN_DATA_DIR: '/srv/warden' }, './state', '/srv/warden'],
    [{ WARDEN_DATA_DIR: '  ' }, './state', '/home/op/state'],
    [{}, './state', '/home/op/state'],
    [{}, undefined, '/home/op/data'],
    [{ WARDEN_DATA_DIR: 'rel' }, undefined, '/home/op/rel'],
  ])('env %j, config %s → %s', (env, configDataDir, expected) => {
    expect(resolveDataDir({ env, configDataDir, cwd: '/home/op' })).toBe(expected);
  });
});

describe('openStore on SQLite', () => {
  it('creates the data dir, uses WAL and records every migration', async () => {
    const dir = path.join(tempDir(), 'nested', 'data');
    const result = await openWardenStore({ dataDir: dir });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    open.push(result.store);
    const { db, file } = result.store;
    expect(file).toBe(path.join(dir, DATABASE_FILE));
    expect(await db.value('PRAGMA journal_mode')).toBe('wal');
    expect((await db.all<{ id: string }>('SELECT id FROM schema_migrations ORDER BY rowid')).map((r) => r.id)).toEqual(migrationsFor('sqlite', WARDEN_MIGRATIONS).map((m) => m.id));
    const tables = (await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => r.name);
    expect(tables).toEqual(expect.arrayContaining(['sessions', 'transcript_entries', 'approvals', 'grants', 'audit_events', 'exec_allowlist']));
  });

  it('rejects duplicate migration ids', async () => {
    const m: Migration = { id: 'dup', up: async () => {} };
    await expect(applyMigrations(memoryDb(), [m, m])).rejects.toThrow(/duplicate migration id dup/);
  });

  it('reports a data dir that cannot be created, naming the path', async () => {
    const base = tempDir();
    writeFileSync(path.join(base, 'file'), 'x');
    const dataDir = path.join(base, 'file', 'data');
    const result = await openWardenStore({ dataDir });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('unwritable');
    expect(result.error.path).toBe(dataDir);
    expect(result.error.message).toContain(dataDir);
  });

  it('reports a database file that is not SQLite as corrupt, naming the file', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, DATABASE_FILE), 'this is a text file, not a database, and it is long enough to have a header');
    const result = await openWardenStore({ dataDir: dir });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('corrupt');
    expect(result.error.message).toContain(path.join(dir, DATABASE_FILE));
    expect(result.error.message).toMatch(/not a Warden SQLite database/);
  });
});

describe.each(ENGINES)('migrations on %s', (engine) => {
  it('applies only new migrations on reopen, in list order', async () => {
    const where = await freshStoreTarget(engine);
    const base = migrationsFor(engine, WARDEN_MIGRATIONS);
    await (await openAt(where, base)).close();
    const order: string[] = [];
    const extra: Migration[] = [
      { id: 'test-001-a', up: async (db) => (order.push('a'), db.exec('CREATE TABLE a (x TEXT)')) },
      { id: 'test-002-b', up: async (db) => (order.push('b'), db.exec('CREATE TABLE b (x TEXT)')) },
    ];
    await (await openAt(where, [...base, ...extra])).close();
    expect(order).toEqual(['a', 'b']);
    await openAt(where, [...base, ...extra]);
    expect(order).toEqual(['a', 'b']);
  });

  it('rolls back a failing migration and leaves earlier ones applied', async () => {
    const { db } = await fresh(engine, []);
    const bad: Migration[] = [
      { id: 'x-001', up: (d) => d.exec('CREATE TABLE ok (x TEXT)') },
      { id: 'x-002', up: async (d) => (await d.exec('CREATE TABLE half (x TEXT)'), await d.exec('THIS IS NOT SQL')) },
    ];
    await expect(applyMigrations(db, bad)).rejects.toThrow();
    expect((await db.all<{ id: string }>('SELECT id FROM schema_migrations')).map((r) => r.id)).toEqual(['x-001']);
    await expect(db.all('SELECT * FROM half')).rejects.toThrow();
    expect(await db.all('SELECT * FROM ok')).toEqual([]);
  });
});

describe.each(ENGINES)('audit log and transcripts on %s', (engine) => {
  it('appends and lists audit events by subject and type prefix', async () => {
    const store = await fresh(engine);
    const audit = new AuditLog(store.db);
    await audit.record({ type: 'approval.requested', subject: 'a1', data: { tool: 'exec' } });
    await audit.record({ type: 'approval.resolved', subject: 'a1', actor: 'discord:1', data: { outcome: 'deny' } });
    await audit.record({ type: 'grant.revoked', subject: 'g1', data: {} });
    expect((await audit.list({ subject: 'a1' })).map((e) => e.type)).toEqual(['approval.requested', 'approval.resolved']);
    expect((await audit.list({ typePrefix: 'grant.' })).map((e) => e.subject)).toEqual(['g1']);
    expect((await audit.list({ subject: 'a1' }))[1]).toMatchObject({ actor: 'discord:1', data: { outcome: 'deny' } });
  });

  it('keeps transcript entries per session in order with details apart from content', async () => {
    const store = await fresh(engine);
    const t = new Transcripts(store.db);
    await t.ensureSession('s1', 'main', 'web');
    await t.append({ sessionKey: 's1', role: 'user', content: 'hi' });
    await t.append({ sessionKey: 's1', role: 'tool', tool: 'read', toolCallId: 'c1', content: [{ type: 'text', text: 'x' }], details: { bytes: 1 } });
    await t.append({ sessionKey: 's2', role: 'user', content: 'other' });
    const entries = await t.list('s1');
    expect(entries.map((e) => e.role)).toEqual(['user', 'tool']);
    expect(entries[1]).toMatchObject({ tool: 'read', toolCallId: 'c1', details: { bytes: 1 }, isError: false });
    expect(await store.db.value('SELECT agent_id FROM sessions WHERE key = ?', ['s1'])).toBe('main');
  });
});
