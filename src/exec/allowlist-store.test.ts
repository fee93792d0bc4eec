import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execConfig } from '../config/schema/exec.js';
import { openStore, type Store } from '../store/index.js';
import { exactArgPattern } from './allowlist.js';
import { ExecAllowlistStore } from './allowlist-store.js';
import { buildApprovalsFile, parseApprovalsFile } from './approvals-file.js';
import { execPolicyFromConfig } from './check.js';
import { evaluateExec } from './decide.js';

let dir: string;
let store: Store;
let clock: number;
let allowlist: ExecAllowlistStore;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'warden-allowlist-'));
  const opened = openStore({ dataDir: dir });
  if (!opened.ok) throw new Error(opened.error.message);
  store = opened.store;
  clock = 1_000;
  allowlist = new ExecAllowlistStore(store.db, () => clock);
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ExecAllowlistStore on a real SQLite file', () => {
  it('applies exec-001-allowlist through the store migrations', () => {
    const ids = store.db.prepare('SELECT id FROM schema_migrations').pluck().all();
    expect(ids).toContain('exec-001-allowlist');
    const columns = store.db.prepare('PRAGMA table_info(exec_allowlist)').all().map((c) => (c as { name: string }).name);
    expect(columns).toEqual(expect.arrayContaining(['last_used_command', 'last_resolved_path']));
  });

  it('keeps entries per agent, with the `*` agent first, and hides expired ones', () => {
    allowlist.add('main', { pattern: '/usr/bin/rm', argPattern: exactArgPattern(['-rf', 'build/']), source: 'allow-always' });
    allowlist.add('*', { pattern: '/usr/bin/ls', source: 'import' });
    allowlist.add('ops', { pattern: '/usr/bin/git', source: 'allow-always' });
    allowlist.add('main', { pattern: '/usr/bin/make', source: 'allow-always', expiresAt: 5_000 });
    expect(allowlist.list('main').map((e) => e.pattern)).toEqual(['/usr/bin/ls', '/usr/bin/rm', '/usr/bin/make']);
    clock = 5_000;
    expect(allowlist.list('main').map((e) => e.pattern)).toEqual(['/usr/bin/ls', '/usr/bin/rm']);
    expect(allowlist.list('ops').map((e) => e.pattern)).toEqual(['/usr/bin/ls', '/usr/bin/git']);
  });

  it('updates instead of duplicating the same pattern and argPattern, also without an argPattern', () => {
    const a = allowlist.add('main', { pattern: '/usr/bin/ls', source: 'allow-always', expiresAt: 2_000 });
    const b = allowlist.add('main', { pattern: '/usr/bin/ls', source: 'allow-always' });
    expect(b.id).toBe(a.id);
    expect(b.expiresAt).toBeUndefined();
    expect(allowlist.all()).toHaveLength(1);
  });

  it('records use and survives reopening the file', () => {
    const entry = allowlist.add('main', { pattern: '/usr/bin/ls', source: 'allow-always' });
    clock = 7_000;
    allowlist.markUsed(entry.id, 'ls -la', '/usr/bin/ls');
    store.close();
    const reopened = openStore({ dataDir: dir });
    if (!reopened.ok) throw new Error(reopened.error.message);
    store = reopened.store;
    const [again] = new ExecAllowlistStore(store.db).list('main');
    expect(again).toMatchObject({ pattern: '/usr/bin/ls', lastUsedAt: 7_000, lastUsedCommand: 'ls -la', lastResolvedPath: '/usr/bin/ls' });
    expect(new ExecAllowlistStore(store.db).remove(entry.id)).toBe(true);
  });

  it('feeds the gate: a stored allow-always entry satisfies the argv it was bound to', () => {
    allowlist.add('main', { pattern: '/usr/bin/rm', argPattern: exactArgPattern(['-rf', 'build/']), source: 'allow-always' });
    const policy = execPolicyFromConfig(execConfig.parse({}), allowlist.list('main'));
    const env = { cwd: dir, home: dir, pathDirs: ['/usr/bin'] };
    expect(evaluateExec('rm -rf build/', policy, env).decision).toBe('allow');
    expect(evaluateExec('rm -rf build/ src/', policy, env).decision).toBe('ask');
  });
});

describe("OpenClaw's exec-approvals.json", () => {
  it('imports allowlists, coerces bare strings, merges default into main and reports policy fields', () => {
    const result = parseApprovalsFile({
      version: 1,
      socket: { path: '/x.sock', token: 'secret' },
      defaults: { security: 'full', ask: 'off' },
      agents: {
        default: { allowlist: ['/usr/bin/ls', { pattern: '/usr/bin/git', argPattern: 'status' }, { pattern: '  ' }] },
        main: { security: 'full', allowlist: [{ id: 'a1', pattern: '/usr/bin/ls', source: 'allow-always', commandText: 'ls', lastUsedAt: 5 }] },
        '*': { allowlist: [{ pattern: '/usr/bin/echo', argPattern: '^hi\x00\x00$' }] },
      },
    });
    expect(result.entries).toEqual([
      { agentId: 'main', pattern: '/usr/bin/ls', argPattern: undefined, source: 'allow-always', lastUsedAt: 5, lastUsedCommand: undefined, lastResolvedPath: undefined },
      { agentId: 'main', pattern: '/usr/bin/git', argPattern: '^(?:status)', source: 'import', lastUsedAt: undefined, lastUsedCommand: undefined, lastResolvedPath: undefined },
      { agentId: '*', pattern: '/usr/bin/echo', argPattern: '^hi\x00\x00$', source: 'import', lastUsedAt: undefined, lastUsedCommand: undefined, lastResolvedPath: undefined },
    ]);
    expect(result.notes).toEqual(
      expect.arrayContaining([
        'defaults.security: not imported; set tools.exec.security in the config',
        "agents.main.security: not imported; Warden's policy is tools.exec",
        'agents.default.allowlist[2]: no pattern, dropped',
        'agents.default.allowlist[1].argPattern: "status" anchored as "^(?:status)"',
      ]),
    );
  });

  it('treats a file of another version as empty', () => {
    expect(parseApprovalsFile({ version: 2, agents: { main: { allowlist: ['/usr/bin/ls'] } } }).entries).toEqual([]);
    expect(parseApprovalsFile('nonsense').entries).toEqual([]);
  });

  it('drops an entry whose argPattern is not a regex', () => {
    const r = parseApprovalsFile({ version: 1, agents: { main: { allowlist: [{ pattern: '/usr/bin/ls', argPattern: '^(' }] } } });
    expect(r.entries).toEqual([]);
    expect(r.notes[0]).toMatch(/not a valid regular expression/);
  });

  it('round-trips through the store and back out, leaving expired entries behind', () => {
    const imported = parseApprovalsFile({ version: 1, agents: { main: { allowlist: [{ pattern: '/usr/bin/ls', argPattern: '^-la\x00$' }] } } });
    for (const e of imported.entries) allowlist.add(e.agentId, e);
    allowlist.add('ops', { pattern: '/usr/bin/make', source: 'allow-always', expiresAt: 2_000 });
    clock = 3_000;
    const doc = buildApprovalsFile(allowlist.all(), execConfig.parse({}), clock);
    expect(doc).toEqual({
      version: 1,
      defaults: { security: 'allowlist', ask: 'on-miss', askFallback: 'deny' },
      agents: { main: { allowlist: [{ id: expect.any(String), pattern: '/usr/bin/ls', argPattern: '^-la\x00$', source: 'import' }] } },
    });
    const again = parseApprovalsFile(JSON.parse(JSON.stringify(doc)));
    expect(again.entries.map((e) => [e.agentId, e.pattern, e.argPattern])).toEqual([['main', '/usr/bin/ls', '^-la\x00$']]);
  });
});
