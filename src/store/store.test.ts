import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AuditLog } from './audit.js';
import { DATABASE_FILE, resolveDataDir } from './data-dir.js';
import { applyMigrations, MIGRATIONS, type Migration } from './migrations.js';
import { openStore } from './store.js';
import { Transcripts } from './transcript.js';

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'warden-store-'));

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

describe('openStore', () => {
  it('creates the data dir, uses WAL and records every migration', () => {
    const dir = path.join(tempDir(), 'nested', 'data');
    const result = openStore({ dataDir: dir });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { db, file } = result.store;
    expect(file).toBe(path.join(dir, DATABASE_FILE));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare('SELECT id FROM schema_migrations ORDER BY rowid').pluck().all()).toEqual(MIGRATIONS.map((m) => m.id));
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    expect(tables).toEqual(expect.arrayContaining(['sessions', 'transcript_entries', 'approvals', 'grants', 'audit_events', 'exec_allowlist']));
    result.store.close();
  });

  it('applies only new migrations on reopen, in list order', () => {
    const dir = tempDir();
    const first = openStore({ dataDir: dir });
    if (!first.ok) throw new Error(first.error.message);
    first.store.close();
    const order: string[] = [];
    const extra: Migration[] = [
      { id: 'test-001-a', up: (db) => (order.push('a'), db.exec('CREATE TABLE a (x)')) },
      { id: 'test-002-b', up: (db) => (order.push('b'), db.exec('CREATE TABLE b (x)')) },
    ];
    const second = openStore({ dataDir: dir, migrations: [...MIGRATIONS, ...extra] });
    if (!second.ok) throw new Error(second.error.message);
    expect(order).toEqual(['a', 'b']);
    second.store.close();
    const third = openStore({ dataDir: dir, migrations: [...MIGRATIONS, ...extra] });
    expect(order).toEqual(['a', 'b']);
    if (third.ok) third.store.close();
  });

  it('rolls back a failing migration and leaves earlier ones applied', () => {
    const db = new Database(':memory:');
    const bad: Migration[] = [
      { id: 'x-001', up: (d) => d.exec('CREATE TABLE ok (x)') },
      { id: 'x-002', up: (d) => (d.exec('CREATE TABLE half (x)'), d.exec('THIS IS NOT SQL')) },
    ];
    expect(() => applyMigrations(db, bad)).toThrow();
    expect(db.prepare('SELECT id FROM schema_migrations').pluck().all()).toEqual(['x-001']);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
  });

  it('rejects duplicate migration ids', () => {
    const db = new Database(':memory:');
    const m: Migration = { id: 'dup', up: () => {} };
    expect(() => applyMigrations(db, [m, m])).toThrow(/duplicate migration id dup/);
  });

  it('reports a data dir that cannot be created, naming the path', () => {
    const base = tempDir();
    writeFileSync(path.join(base, 'file'), 'x');
    const dataDir = path.join(base, 'file', 'data');
    const result = openStore({ dataDir });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('unwritable');
    expect(result.error.path).toBe(dataDir);
    expect(result.error.message).toContain(dataDir);
  });

  it('reports a database file that is not SQLite as corrupt, naming the file', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, DATABASE_FILE), 'this is a text file, not a database, and it is long enough to have a header');
    const result = openStore({ dataDir: dir });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('corrupt');
    expect(result.error.message).toContain(path.join(dir, DATABASE_FILE));
    expect(result.error.message).toMatch(/not a Warden SQLite database/);
  });
});

describe('audit log and transcripts', () => {
  it('appends and lists audit events by subject and type prefix', () => {
    const result = openStore({ dataDir: tempDir() });
    if (!result.ok) throw new Error(result.error.message);
    const audit = new AuditLog(result.store.db);
    audit.record({ type: 'approval.requested', subject: 'a1', data: { tool: 'exec' } });
    audit.record({ type: 'approval.resolved', subject: 'a1', actor: 'discord:1', data: { outcome: 'deny' } });
    audit.record({ type: 'grant.revoked', subject: 'g1', data: {} });
    expect(audit.list({ subject: 'a1' }).map((e) => e.type)).toEqual(['approval.requested', 'approval.resolved']);
    expect(audit.list({ typePrefix: 'grant.' }).map((e) => e.subject)).toEqual(['g1']);
    expect(audit.list({ subject: 'a1' })[1]).toMatchObject({ actor: 'discord:1', data: { outcome: 'deny' } });
    result.store.close();
  });

  it('keeps transcript entries per session in order with details apart from content', () => {
    const result = openStore({ dataDir: tempDir() });
    if (!result.ok) throw new Error(result.error.message);
    const t = new Transcripts(result.store.db);
    t.ensureSession('s1', 'main', 'web');
    t.append({ sessionKey: 's1', role: 'user', content: 'hi' });
    t.append({ sessionKey: 's1', role: 'tool', tool: 'read', toolCallId: 'c1', content: [{ type: 'text', text: 'x' }], details: { bytes: 1 } });
    t.append({ sessionKey: 's2', role: 'user', content: 'other' });
    const entries = t.list('s1');
    expect(entries.map((e) => e.role)).toEqual(['user', 'tool']);
    expect(entries[1]).toMatchObject({ tool: 'read', toolCallId: 'c1', details: { bytes: 1 }, isError: false });
    expect(result.store.db.prepare('SELECT agent_id FROM sessions WHERE key = ?').pluck().get('s1')).toBe('main');
    result.store.close();
  });
});
