// The built CLI as a process: every command answers --help and -h with its usage and exits 0
// without side effects (no config read, no data dir, no listener: `warden start --help` used to
// start the bot), and exec-check, invoke and url-check exit with codes a script can branch on.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));
const run = (cwd: string, argv: string[]) => execa('node', [BIN, ...argv], { cwd, reject: false, timeout: 20_000, env: { WARDEN_LOG_LEVEL: 'silent', WARDEN_DATA_DIR: '' } });

/** Every command of src/cli.ts, with the words its usage starts with (subcommands included). */
const COMMANDS: Array<[string[], string]> = [
  [['start'], 'usage: warden start'],
  [['tools'], 'usage: warden tools'],
  [['exec-check'], 'usage: warden exec-check'],
  [['url-check'], 'usage: warden url-check'],
  [['invoke'], 'usage: warden invoke'],
  [['invoke', 'exec'], 'usage: warden invoke'],
  [['usage'], 'usage: warden usage'],
  [['approvals'], 'usage: warden approvals'],
  [['approvals', 'resolve'], 'usage: warden approvals'],
  [['skills'], 'usage: warden skills'],
  [['plugins'], 'usage: warden plugins'],
  [['mcp', 'list'], 'usage: warden mcp'],
  [['audit'], 'usage: warden audit'],
  [['access', 'check'], 'usage: warden access check'],
  [['doctor'], 'usage: warden doctor'],
  [['node'], 'usage: warden node'],
  [['exec-approvals', 'export'], 'usage: warden exec-approvals'],
  [['discord', 'invite'], 'usage: warden discord invite'],
  [['slack', 'manifest'], 'usage: warden slack manifest'],
];

// A config that would start the web chat on a fixed port and write state beside it.
const CONFIG = 'channels:\n  web:\n    port: 3999\ndataDir: ./state\n';

describe('--help and -h', () => {
  it.each(COMMANDS.flatMap(([argv, usage]) => [[[...argv, '--help'], usage] as const, [[...argv, '-h'], usage] as const, [['help', argv[0]!], usage] as const]))('warden %j', async (argv, usage) => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'warden-help-'));
    writeFileSync(path.join(cwd, 'warden.config.yaml'), CONFIG);
    const started = Date.now();
    const r = await run(cwd, [...argv]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.startsWith(usage), r.stdout).toBe(true);
    expect(r.stderr).toBe('');
    // Nothing was created: no data dir, no workspace, no token; the process did not stay to serve.
    expect(readdirSync(cwd)).toEqual(['warden.config.yaml']);
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);

  it('the top level lists every command, and says how to ask one for help', async () => {
    const r = await run(tmpdir(), ['-h']);
    expect(r.exitCode).toBe(0);
    for (const [argv] of COMMANDS) expect(r.stdout).toContain(`  ${argv[0]}`);
    expect(r.stdout).toContain('warden COMMAND --help (or -h)');
  });

  it('-h after -- is part of the command being checked, not a request for help', async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'warden-help-'));
    writeFileSync(path.join(cwd, 'warden.config.yaml'), 'tools:\n  exec: { security: allowlist, ask: on-miss, allowlist: [{ pattern: /usr/bin/ls }] }\n');
    const r = await run(cwd, ['exec-check', '--json', '--', 'ls', '-h']);
    expect(JSON.parse(r.stdout)).toMatchObject({ decision: 'allow' });
  });
});

describe('exit codes a script can branch on', () => {
  const cwd = mkdtempSync(path.join(tmpdir(), 'warden-exit-'));
  mkdirSync(path.join(cwd, 'workspace'));
  writeFileSync(path.join(cwd, 'workspace', 'notes.txt'), 'hello\n');
  writeFileSync(
    path.join(cwd, 'warden.config.yaml'),
    [
      'agents: { list: [{ id: main, default: true, workspace: ./workspace }] }',
      'tools:',
      '  profile: coding',
      '  exec: { host: gateway, security: allowlist, ask: on-miss, allowlist: [{ pattern: /usr/bin/ls }] }',
      '  toolsBySender: { "id:666": { deny: [exec, read] } }',
      'approvals: { exec: { timeoutSec: 30 } }',
      'dataDir: ./data',
    ].join('\n'),
  );

  it.each([
    ['exec-check allow', ['exec-check', '--', 'ls'], 0, /^allow:/],
    ['exec-check ask (not on the allowlist)', ['exec-check', '--', 'git log -p'], 4, /^ask:/],
    ['exec-check deny (exec is not on this surface)', ['exec-check', '--sender', '666', '--', 'ls'], 5, /^deny: exec is not on this surface/],
    ['exec-check bad flags', ['exec-check', '--nope', '--', 'ls'], 2, /^$/],
    ['invoke ran', ['invoke', 'read', '--args', '{"path":"notes.txt"}'], 0, /^read: ok\n[\s\S]*hello/],
    ['invoke: the tool failed', ['invoke', 'read', '--args', '{"path":"missing.txt"}'], 6, /^read: error/],
    ['invoke: an unknown tool', ['invoke', 'nope'], 6, /Unknown tool/],
    ['invoke refused by policy (not on this surface)', ['invoke', 'read', '--sender', '666', '--args', '{"path":"notes.txt"}'], 5, /^read: blocked \(not-on-surface\)/],
    ['invoke refused by the approver', ['invoke', 'exec', '--approve', 'deny', '--args', '{"command":"git log -p"}'], 5, /^exec: error\nexec denied by the approver/],
    ['invoke bad arguments to the command', ['invoke'], 2, /^$/],
    ['url-check allowed (a public literal)', ['url-check', 'http://93.184.215.14/'], 0, /^allowed:/],
    ['url-check blocked (a private literal)', ['url-check', 'http://10.0.0.1/'], 5, /^blocked: blocked address 10\.0\.0\.1/],
    ['url-check bad flags', ['url-check', 'http://10.0.0.1/', '--tool', 'curl'], 2, /^$/],
  ] as const)('%s → %i', async (_name, argv, code, out) => {
    const r = await run(cwd, [...argv]);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(code);
    expect(r.stdout).toMatch(out);
  }, 30_000);

  it('the data dir of those calls is the only thing they made', () => {
    expect(existsSync(path.join(cwd, 'data'))).toBe(true);
  });
});
