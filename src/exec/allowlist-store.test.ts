import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { execConfig } from '../config/schema/exec.js';
import { openWardenStore } from '../app/migrations.js';
import { migrationsFor, type Store } from '../store/index.js';
import { argPatternMatches, exactArgPattern } from './allowlist.js';
import { execMigrations, ExecAllowlistStore, readArgPattern, storedArgPattern } from './allowlist-store.js';
import { buildApprovalsFile, parseApprovalsFile } from './approvals-file.js';
import { execPolicyFromConfig } from './check.js';
import { evaluateExec } from './decide.js';

describe.each(ENGINES)('ExecAllowlistStore on %s', (engine) => {
  let where: { dataDir: string; url: string | undefined };
  let store: Store;
  let clock: number;
  let allowlist: ExecAllowlistStore;

  const openAt = async () => {
    const opened = await openWardenStore({ dataDir: where.dataDir, url: where.url });
    if (!opened.ok) throw new Error(opened.error.message);
    return opened.store;
  };

  beforeEach(async () => {
    where = await freshStoreTarget(engine);
    store = await openAt();
    clock = 1_000;
    allowlist = new ExecAllowlistStore(store.db, () => clock);
  });
  afterEach(async () => {
    await store.close();
  });

  it('applies the exec migrations through the store migrations', async () => {
    const ids = (await store.db.all<{ id: string }>('SELECT id FROM schema_migrations')).map((r) => r.id);
    expect(ids).toEqual(expect.arrayContaining(migrationsFor(engine, [execMigrations]).map((m) => m.id)));
    if (engine === 'sqlite') expect(ids).toContain('exec-001-allowlist');
    const columns =
      engine === 'sqlite'
        ? await store.db.all<{ name: string }>('PRAGMA table_info(exec_allowlist)')
        : await store.db.all<{ name: string }>("SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'exec_allowlist'");
    expect(columns.map((c) => c.name)).toEqual(expect.arrayContaining(['last_used_command', 'last_resolved_path']));
  });

  it('keeps entries per agent, with the `*` agent first, and hides expired ones', async () => {
    await allowlist.add('main', { pattern: '/usr/bin/rm', argPattern: exactArgPattern(['-rf', 'build/']), source: 'allow-always' });
    await allowlist.add('*', { pattern: '/usr/bin/ls', source: 'import' });
    await allowlist.add('ops', { pattern: '/usr/bin/git', source: 'allow-always' });
    await allowlist.add('main', { pattern: '/usr/bin/make', source: 'allow-always', expiresAt: 5_000 });
    expect((await allowlist.list('main')).map((e) => e.pattern)).toEqual(['/usr/bin/ls', '/usr/bin/rm', '/usr/bin/make']);
    clock = 5_000;
    expect((await allowlist.list('main')).map((e) => e.pattern)).toEqual(['/usr/bin/ls', '/usr/bin/rm']);
    expect((await allowlist.list('ops')).map((e) => e.pattern)).toEqual(['/usr/bin/ls', '/usr/bin/git']);
  });

  it('updates instead of duplicating the same pattern and argPattern, also without an argPattern', async () => {
    const a = await allowlist.add('main', { pattern: '/usr/bin/ls', source: 'allow-always', expiresAt: 2_000 });
    const b = await allowlist.add('main', { pattern: '/usr/bin/ls', source: 'allow-always' });
    expect(b.id).toBe(a.id);
    expect(b.expiresAt).toBeUndefined();
    expect(await allowlist.all()).toHaveLength(1);
  });

  it('records use and survives reopening the file', async () => {
    const entry = await allowlist.add('main', { pattern: '/usr/bin/ls', source: 'allow-always' });
    clock = 7_000;
    await allowlist.markUsed(entry.id, 'ls -la', '/usr/bin/ls');
    await store.close();
    store = await openAt();
    const [again] = await new ExecAllowlistStore(store.db).list('main');
    expect(again).toMatchObject({ pattern: '/usr/bin/ls', lastUsedAt: 7_000, lastUsedCommand: 'ls -la', lastResolvedPath: '/usr/bin/ls' });
    expect(await new ExecAllowlistStore(store.db).remove(entry.id)).toBe(true);
  });

  it('keeps an exact-argv binding exact: its NUL separators survive the store', async () => {
    const args = ['-rf', 'build/'];
    await allowlist.add('main', { pattern: '/usr/bin/rm', argPattern: exactArgPattern(args), source: 'allow-always' });
    await allowlist.add('main', { pattern: '/usr/bin/rm', argPattern: exactArgPattern(args), source: 'allow-always' });
    const [entry, ...more] = await allowlist.list('main');
    expect(more).toEqual([]);
    expect(entry!.argPattern).toBe(exactArgPattern(args));
    expect(argPatternMatches(entry!.argPattern!, args)).toBe(true);
    // One argument spelling the words with a replacement character in between is another argv.
    expect(argPatternMatches(entry!.argPattern!, ['-rf\uFFFDbuild/\uFFFD'])).toBe(false);
    expect(argPatternMatches(entry!.argPattern!, ['-rf', 'build/', 'src/'])).toBe(false);
  });

  it('feeds the gate: a stored allow-always entry satisfies the argv it was bound to', async () => {
    await allowlist.add('main', { pattern: '/usr/bin/rm', argPattern: exactArgPattern(['-rf', 'build/']), source: 'allow-always' });
    const policy = execPolicyFromConfig(execConfig.parse({}), await allowlist.list('main'));
    const env = { cwd: where.dataDir, home: where.dataDir, pathDirs: ['/usr/bin'] };
    expect(evaluateExec('rm -rf build/', policy, env).decision).toBe('allow');
    expect(evaluateExec('rm -rf build/ src/', policy, env).decision).toBe('ask');
  });

  it('round-trips through the store and back out, leaving expired entries behind', async () => {
    const imported = parseApprovalsFile({ version: 1, agents: { main: { allowlist: [{ pattern: '/usr/bin/ls', argPattern: '^-la\x00$' }] } } });
    for (const e of imported.entries) await allowlist.add(e.agentId, e);
    await allowlist.add('ops', { pattern: '/usr/bin/make', source: 'allow-always', expiresAt: 2_000 });
    clock = 3_000;
    const doc = buildApprovalsFile(await allowlist.all(), execConfig.parse({}), clock);
    expect(doc).toEqual({
      version: 1,
      defaults: { security: 'allowlist', ask: 'on-miss', askFallback: 'deny' },
      agents: { main: { allowlist: [{ id: expect.any(String), pattern: '/usr/bin/ls', argPattern: '^-la\x00$', source: 'import' }] } },
    });
    const again = parseApprovalsFile(JSON.parse(JSON.stringify(doc)));
    expect(again.entries.map((e) => [e.agentId, e.pattern, e.argPattern])).toEqual([['main', '/usr/bin/ls', '^-la\x00$']]);
  });
});

describe('argPattern column encoding', () => {
  it.each([
    ['an exact-argv pattern', '^-la\x00$'],
    ['the empty argv', exactArgPattern([])],
    ['a regex without NUL, kept as written', '^(?:status)'],
    ['a glob', 'status *'],
    ['the escape text \\x00 (a plain regex, not an argv binding)', '^-la\\x00$'],
    ['text that starts with the mark', '\u0001^x'],
    ['NUL and the mark together', '\u0001^a\x00$'],
  ])('%s reads back exactly, with no NUL in the column', (_label, pattern) => {
    const stored = storedArgPattern(pattern);
    expect(stored).not.toContain('\u0000');
    expect(readArgPattern(stored)).toBe(pattern);
  });

  it('reads a row written before the encoding as it is', () => {
    expect(readArgPattern('^-la\x00$')).toBe('^-la\x00$');
    expect(readArgPattern('\u0001not json')).toBe('\u0001not json');
  });
});

describe("OpenClaw's exec-approvals.json", () => {
  it('imports allowlists, coerces bare strings, merges default into main and reports policy fields', async () => {
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

  it('treats a file of another version as empty', async () => {
    expect(parseApprovalsFile({ version: 2, agents: { main: { allowlist: ['/usr/bin/ls'] } } }).entries).toEqual([]);
    expect(parseApprovalsFile('nonsense').entries).toEqual([]);
  });

  it('drops an entry whose argPattern is not a regex', async () => {
    const r = parseApprovalsFile({ version: 1, agents: { main: { allowlist: [{ pattern: '/usr/bin/ls', argPattern: '^(' }] } } });
    expect(r.entries).toEqual([]);
    expect(r.notes[0]).toMatch(/argPattern: not a regular expression: .*; entry dropped/);
  });

  it('drops an entry whose regex needs a backtracking engine, saying why', async () => {
    const r = parseApprovalsFile({ version: 1, agents: { main: { allowlist: [{ pattern: '/usr/bin/git', argPattern: '^(?!push)' }, { pattern: '/usr/bin/ls', argPattern: '^-l$' }] } } });
    expect(r.entries.map((e) => e.argPattern)).toEqual(['^-l$']);
    expect(r.notes[0]).toMatch(/argPattern: uses a negative lookahead .*linear-time engine.*; entry dropped/);
  });
});
