// The shipped team example through the built CLI as a process: its exec-guard rule ("no ssh to
// production from #general") loads under plain node and is enforced; a broken copy of the same
// policy plugin stops `warden start` before anything listens, makes `warden audit` exit 1, and a
// config edit that would lose it is refused by the running bot. The attacker table of ways a
// policy plugin fails to load: test/security/policy-plugin-load.test.ts.
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { describe, expect, it } from 'vitest';
import { until } from '../until.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = path.join(ROOT, 'bin/warden.js');
const ENV = { WARDEN_LOG_LEVEL: 'info', WARDEN_DATA_DIR: '' };

/** The team example in a fresh folder: its plugins from `plugins` there (a copy of the shipped ones), no fixed ports. */
function teamExample(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-team-'));
  cpSync(path.join(ROOT, 'plugins'), path.join(dir, 'plugins'), { recursive: true, filter: (src) => !src.endsWith('.test.ts') });
  const text = readFileSync(path.join(ROOT, 'config/team.example.yaml'), 'utf8');
  expect(text).toContain('paths: [../plugins]');
  writeFileSync(path.join(dir, 'team.yaml'), `${text.replace('paths: [../plugins]', 'paths: [plugins]').replace('web: { port: 3000 }', 'web: { port: 0 }')}\nops: { port: 0 }\n`);
  return dir;
}

const run = (dir: string, argv: string[]) => execa('node', [BIN, ...argv, '--config', 'team.yaml'], { cwd: dir, reject: false, timeout: 60_000, env: ENV });

function start(dir: string): { child: ResultPromise; output: () => string } {
  const child = execa('node', [BIN, 'start', '--config', 'team.yaml'], { cwd: dir, reject: false, env: ENV, all: true });
  let out = '';
  child.all?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return { child, output: () => out };
}

/** Breaks the copied exec-guard as an attacker with write access to its folder would. */
const breakGuard = (dir: string) => writeFileSync(path.join(dir, 'plugins/exec-guard/index.ts'), 'export function register(api: WardenPluginApi) {\n');

const SSH_IN_GENERAL = ['invoke', 'exec', '--json', '--provider', 'discord', '--guild', '222', '--channel', '999', '--channel-name', 'general', '--sender', '123456789012345678', '--args', '{"command":"ssh prod-db uptime"}'];

describe('the team example with its exec-guard plugin', () => {
  it('starts with the rule loaded, and the rule blocks ssh to production in #general', async () => {
    const dir = teamExample();
    const bot = start(dir);
    await until(() => bot.output().includes('Warden is running'), 45_000, 'Warden is running');
    expect(bot.output()).toMatch(/"plugin":"exec-guard".*"msg":"plugin loaded"/);
    expect(bot.output()).not.toContain('failed to load');
    bot.child.kill('SIGTERM');
    expect((await bot.child).exitCode).toBe(0);

    // A guild the example does not configure, so exec is on the surface and only the plugin stands in the way.
    const r = await run(dir, SSH_IN_GENERAL);
    expect(r.exitCode, r.stderr).toBe(5);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'blocked', deniedReason: 'plugin-before-tool-call', content: [{ text: expect.stringContaining('no ssh to production from a public channel') }] });
    const audit = await run(dir, ['audit', '--json']);
    expect((JSON.parse(audit.stdout) as { findings: Array<{ id: string }> }).findings.map((f) => f.id)).not.toContain('plugins.policy-not-loaded');
  }, 120_000);

  it('with the plugin broken: start refuses before anything listens, invoke refuses, audit exits 1', async () => {
    const dir = teamExample();
    breakGuard(dir);
    const started = await run(dir, ['start']);
    expect(started.exitCode).toBe(2);
    expect(started.stderr).toMatch(/^warden start: plugin exec-guard did not load \(entry module index\.ts failed to load: [\s\S]*\) and it declares before_tool_call; Warden does not run without its rules/m);
    expect(started.stdout).not.toContain('Warden is running');
    expect(existsSync(path.join(dir, 'data'))).toBe(false);

    const invoked = await run(dir, SSH_IN_GENERAL);
    expect(invoked.exitCode).toBe(2);
    expect(invoked.stderr).toContain('warden invoke: plugin exec-guard did not load');

    const audit = await run(dir, ['audit', '--json']);
    expect(audit.exitCode).toBe(1);
    expect((JSON.parse(audit.stdout) as { findings: Array<{ id: string; severity: string; message: string }> }).findings).toContainEqual(
      expect.objectContaining({ id: 'plugins.policy-not-loaded', severity: 'critical', message: expect.stringContaining('plugin exec-guard did not load') }),
    );
  }, 120_000);

  it('a config edit that would lose the rule is refused by the running bot; the old config keeps serving', async () => {
    const dir = teamExample();
    const bot = start(dir);
    await until(() => bot.output().includes('Warden is running'), 45_000, 'Warden is running');
    // The plugin folder moved away from under the config: the rule's plugin is nowhere.
    const file = path.join(dir, 'team.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('paths: [plugins]', 'paths: [plugins-moved]'));
    await until(() => bot.output().includes('config change refused'), 30_000, 'the refusal');
    expect(bot.output()).toMatch(/plugins\.paths: plugins-moved is not a directory/);
    expect(bot.output()).not.toContain('Config reloaded');
    bot.child.kill('SIGTERM');
    expect((await bot.child).exitCode).toBe(0);
  }, 120_000);
});
