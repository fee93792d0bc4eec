import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { ExecAllowlistStore } from '../exec/allowlist-store.js';
import { openWardenStore } from '../app/migrations.js';
import type { CliIO } from './args.js';

function setup(config = 'owners: { discord: ["1"] }\ntools: { exec: { security: allowlist, ask: off } }\n') {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-exec-approvals-cli-'));
  writeFileSync(path.join(dir, 'warden.config.yaml'), config);
  return dir;
}

async function cli(dir: string, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: (t) => void (stdout += `${t}\n`), stderr: (t) => void (stderr += `${t}\n`), cwd: dir, env: {} };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

async function stored(dir: string) {
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  try {
    return (await new ExecAllowlistStore(opened.store.db).all()).map((e) => ({ agentId: e.agentId, pattern: e.pattern, argPattern: e.argPattern, source: e.source }));
  } finally {
    await opened.store.close();
  }
}

const OPENCLAW_FILE = {
  version: 1,
  socket: { path: '/home/x/.openclaw/exec-approvals.sock', token: 'secret' },
  defaults: { security: 'full', ask: 'off' },
  agents: {
    default: { allowlist: ['/usr/bin/ls', { pattern: '/usr/bin/git', argPattern: '^status' }] },
    main: { security: 'full', allowlist: [{ id: 'a1', pattern: '/usr/bin/rm', argPattern: 'build', source: 'allow-always', lastUsedAt: 5 }, { pattern: '/usr/bin/ls' }] },
    '*': { allowlist: [{ pattern: '/usr/bin/cat' }] },
    ops: { allowlist: [{ pattern: '  ' }, { pattern: '/usr/bin/tee', argPattern: '^(' }, { pattern: '/usr/bin/du' }] },
  },
};

describe('warden exec-approvals import', () => {
  it("imports allowlists from OpenClaw's file, reporting what it did not take", async () => {
    const dir = setup();
    writeFileSync(path.join(dir, 'exec-approvals.json'), JSON.stringify(OPENCLAW_FILE));
    const r = await cli(dir, ['exec-approvals', 'import', 'exec-approvals.json']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^imported 5 allowlist entries:/);
    expect(r.stdout).toContain('note: defaults.security: not imported; set tools.exec.security in the config');
    expect(r.stdout).toContain('note: agents.main.security: not imported');
    expect(r.stdout).toContain('note: agents.ops.allowlist[0]: no pattern, dropped');
    expect(r.stdout).toContain('note: agents.ops.allowlist[1].argPattern: not a regular expression: /^(/: Unterminated group; entry dropped');
    expect(r.stdout).toContain('note: agents.ops: no such agent in agents.list');
    expect(await stored(dir)).toEqual([
      { agentId: '*', pattern: '/usr/bin/cat', argPattern: undefined, source: 'import' },
      { agentId: 'main', pattern: '/usr/bin/rm', argPattern: '^(?:build)', source: 'allow-always' },
      { agentId: 'main', pattern: '/usr/bin/ls', argPattern: undefined, source: 'import' },
      { agentId: 'main', pattern: '/usr/bin/git', argPattern: '^status', source: 'import' },
      { agentId: 'ops', pattern: '/usr/bin/du', argPattern: undefined, source: 'import' },
    ]);
  });

  it('imported entries are what the gate uses, and importing twice adds nothing', async () => {
    const dir = setup();
    writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ version: 1, agents: { main: { allowlist: [{ pattern: '/usr/bin/rm' }] } } }));
    expect((await cli(dir, ['exec-check', '--', 'rm', 'x'])).stdout).toMatch(/deny/);
    await cli(dir, ['exec-approvals', 'import', 'a.json']);
    await cli(dir, ['exec-approvals', 'import', 'a.json']);
    expect(await stored(dir)).toHaveLength(1);
    expect((await cli(dir, ['exec-check', '--', 'rm', 'x'])).stdout).toMatch(/allow/);
  });

  it('--agent takes one agent only; --dry-run writes nothing', async () => {
    const dir = setup();
    writeFileSync(path.join(dir, 'f.json'), JSON.stringify(OPENCLAW_FILE));
    const dry = await cli(dir, ['exec-approvals', 'import', 'f.json', '--agent', '*', '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    const answer = JSON.parse(dry.stdout);
    expect(answer.dryRun).toBe(true);
    expect(answer.imported).toEqual([{ agentId: '*', pattern: '/usr/bin/cat', source: 'import' }]);
    expect(answer.notes).toContain('--agent *: 4 entries of other agents skipped (main, ops)');
    expect(await stored(dir)).toEqual([]);
    await cli(dir, ['exec-approvals', 'import', 'f.json', '--agent', '*']);
    expect((await stored(dir)).map((e) => e.agentId)).toEqual(['*']);
  });

  it.each<[string, string[], RegExp]>([
    ['a missing file', ['import', 'nope.json'], /cannot read .*nope\.json: ENOENT/],
    ['invalid JSON', ['import', 'bad.json'], /bad\.json is not valid JSON/],
    ['no file', ['import'], /import takes one FILE/],
    ['an unknown subcommand', ['imprt', 'x'], /unknown subcommand "imprt" \(did you mean "import"\?\)/],
    ['an unknown flag', ['export', '--agnet', 'main'], /agnet/],
    ['--agent without a value', ['export', '--agent'], /--agent needs an agent id/],
  ])('refuses %s with exit 2', async (_what, argv, message) => {
    const dir = setup();
    writeFileSync(path.join(dir, 'bad.json'), '{ version: 1');
    const r = await cli(dir, ['exec-approvals', ...argv]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(await stored(dir)).toEqual([]);
  });

  it('a file of another version imports nothing and says so', async () => {
    const dir = setup();
    writeFileSync(path.join(dir, 'v2.json'), JSON.stringify({ version: 2, agents: { main: { allowlist: ['/usr/bin/rm'] } } }));
    const r = await cli(dir, ['exec-approvals', 'import', 'v2.json']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('imported 0 allowlist entries');
    expect(r.stdout).toContain('note: version: expected 1');
    expect(await stored(dir)).toEqual([]);
  });
});

describe('warden exec-approvals export', () => {
  it("prints the live stored entries in OpenClaw's shape, the config's policy as defaults; import reads it back", async () => {
    const dir = setup();
    writeFileSync(path.join(dir, 'f.json'), JSON.stringify(OPENCLAW_FILE));
    await cli(dir, ['exec-approvals', 'import', 'f.json']);
    const r = await cli(dir, ['exec-approvals', 'export']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.version).toBe(1);
    expect(doc.defaults).toEqual({ security: 'allowlist', ask: 'off', askFallback: 'deny' });
    expect(doc.socket).toBeUndefined();
    expect(Object.keys(doc.agents).sort()).toEqual(['*', 'main', 'ops']);
    expect(doc.agents.main.allowlist).toEqual([
      expect.objectContaining({ pattern: '/usr/bin/rm', argPattern: '^(?:build)', source: 'allow-always', lastUsedAt: 5 }),
      expect.objectContaining({ pattern: '/usr/bin/ls', source: 'import' }),
      expect.objectContaining({ pattern: '/usr/bin/git', argPattern: '^status', source: 'import' }),
    ]);

    const other = setup();
    writeFileSync(path.join(other, 'exported.json'), r.stdout);
    await cli(other, ['exec-approvals', 'import', 'exported.json']);
    expect(await stored(other)).toEqual(await stored(dir));
  });

  it('--agent limits the export to one agent', async () => {
    const dir = setup();
    writeFileSync(path.join(dir, 'f.json'), JSON.stringify(OPENCLAW_FILE));
    await cli(dir, ['exec-approvals', 'import', 'f.json']);
    const doc = JSON.parse((await cli(dir, ['exec-approvals', 'export', '--agent', '*'])).stdout);
    expect(Object.keys(doc.agents)).toEqual(['*']);
  });

  it('an empty store exports an empty file', async () => {
    const dir = setup();
    const doc = JSON.parse((await cli(dir, ['exec-approvals', 'export'])).stdout);
    expect(doc.agents).toEqual({});
  });
});
