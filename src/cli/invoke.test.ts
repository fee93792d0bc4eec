import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { openWardenStore } from '../app/migrations.js';
import { Transcripts } from '../store/transcript.js';
import type { CliIO } from './args.js';

function workdir(config = 'owners: { web: ["me"] }\ntools: { profile: coding }\n'): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-invoke-'));
  writeFileSync(path.join(dir, 'warden.config.yaml'), config);
  return dir;
}

async function cli(dir: string, argv: string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: (t) => void (stdout += `${t}\n`), stderr: (t) => void (stderr += `${t}\n`), cwd: dir, env };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

describe('warden invoke', () => {
  it('prints a tool result with the config\'s credentials and .env values as labels', async () => {
    const dir = workdir('owners: { web: ["me"] }\ntools: { profile: coding, exec: { host: gateway, security: full, ask: "off" } }\nchannels: { slack: { botToken: "xoxb-cli-T0ken-9988776655", signingSecret: "s1gning-Secret-4242" } }\n');
    writeFileSync(path.join(dir, '.env'), 'ACME_KEY=acme-Cli-K3y-123456\n');
    mkdirSync(path.join(dir, 'workspace'));
    const { stdout } = await cli(dir, ['invoke', 'exec', '--sender', 'me', '--args', JSON.stringify({ command: 'cat ../warden.config.yaml ../.env' })], { PATH: process.env.PATH });
    expect(stdout).toContain('[secret:SLACK_BOT_TOKEN]');
    expect(stdout).toContain('[secret:SLACK_SIGNING_SECRET]');
    expect(stdout).toContain('[secret:ACME_KEY]');
    expect(stdout).not.toMatch(/cli-T0ken|s1gning|acme-Cli/);
  });

  it('runs session_status through the chain and stores the result in the session', async () => {
    const dir = workdir();
    const { code, stdout } = await cli(dir, ['invoke', 'session_status', '--sender', 'me', '--json']);
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as { status: string; details: { sessionKey: string; tools: { ids: string[] } } };
    expect(out.status).toBe('ok');
    expect(out.details.sessionKey).toBe('agent:main:web:direct:me');
    expect(out.details.tools.ids).toContain('session_status');
    const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
    if (!opened.ok) throw new Error(opened.error.message);
    expect(await new Transcripts(opened.store.db).list('agent:main:web:direct:me')).toHaveLength(1);
    await opened.store.close();
  });

  it.each([
    [{ cron: '* * * * * *' }, 'cron: "* * * * * *" runs 1 s apart; runs must be at least 60000 ms (one minute) apart'],
    [{ cron: '*/20 * * * * *' }, 'cron: "*/20 * * * * *" runs 20 s apart; runs must be at least 60000 ms (one minute) apart'],
  ])('cron add %o: refused by the same minimum as every and /cron add', async (schedule, error) => {
    const dir = workdir('owners: { web: ["me"] }\ntools: { profile: coding, allow: [cron] }\n');
    const { stdout } = await cli(dir, ['invoke', 'cron', '--sender', 'me', '--args', JSON.stringify({ action: 'add', message: 'spam', ...schedule })]);
    expect(stdout).toContain(error);
    const ok = await cli(dir, ['invoke', 'cron', '--sender', 'me', '--json', '--args', JSON.stringify({ action: 'add', message: 'digest', cron: '15 9 * * * *' })]);
    expect(ok.stdout).not.toContain('runs must be');
    expect(JSON.parse(ok.stdout).status).not.toBe('error');
  });

  it('answers an unknown tool and bad arguments with readable errors', async () => {
    const dir = workdir();
    const unknown = await cli(dir, ['invoke', 'nope']);
    expect(unknown.code).toBe(6); // the call's error, as the model would read it
    expect(unknown.stdout).toContain('Unknown tool \\"nope\\". Available tools:');
    const invalid = await cli(dir, ['invoke', 'session_status', '--args', '{"x":1}']);
    expect(invalid.stdout).toContain('Invalid arguments for session_status: x: unknown field');
  });

  it('refuses a tool the surface removed, naming the step', async () => {
    const dir = workdir('owners: { web: ["me"] }\ntools: { profile: coding, deny: [session_status] }\n');
    const { stdout } = await cli(dir, ['invoke', 'session_status', '--sender', 'me']);
    expect(stdout).toContain('session_status: blocked (not-on-surface)');
    expect(stdout).toMatch(/removed by tools\.(allow|deny)/);
  });

  it.each([
    [['invoke'], 'missing TOOL'],
    [['invoke', 'session_status', '--args', '{bad'], '--args: not valid JSON'],
    [['invoke', 'session_status', '--approve', 'maybe'], '--approve: expected once, always or deny, got "maybe"'],
    [['invoke', 'session_status', '--sendr', 'me'], 'unknown option --sendr (did you mean --sender?)'],
  ])('%j is bad input (exit 2)', async (argv, message) => {
    const { code, stderr } = await cli(workdir(), argv);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it('names the data dir when it cannot be created', async () => {
    const dir = workdir();
    writeFileSync(path.join(dir, 'blocker'), 'a file');
    const { code, stderr } = await cli(dir, ['invoke', 'session_status'], { WARDEN_DATA_DIR: path.join(dir, 'blocker', 'data') });
    expect(code).toBe(2);
    expect(stderr).toContain(path.join(dir, 'blocker', 'data'));
  });

  it('names the database file when it is not SQLite', async () => {
    const dir = workdir();
    const data = path.join(dir, 'data');
    await cli(dir, ['approvals', 'list']);
    writeFileSync(path.join(data, 'warden.sqlite'), 'x'.repeat(4096));
    const { code, stderr } = await cli(dir, ['invoke', 'session_status']);
    expect(code).toBe(2);
    expect(stderr).toContain(`${path.join(data, 'warden.sqlite')} is not a Warden SQLite database`);
  });

  it('meets approvals.rules at the same step as the bot: the rule asks, and a deny names it', async () => {
    const dir = workdir('owners: { web: ["me"] }\ntools: { profile: coding }\napprovals: { rules: [{ tool: session_status }] }\n');
    const denied = await cli(dir, ['invoke', 'session_status', '--sender', 'me', '--approve', 'deny', '--json']);
    expect(denied.code).toBe(5);
    const out = JSON.parse(denied.stdout) as { status: string; details: { deniedReason: string; rule: string } };
    expect(out.status).toBe('blocked');
    expect(out.details).toMatchObject({ deniedReason: 'approval-denied', rule: 'approvals.rules[0]' });
    const allowed = await cli(dir, ['invoke', 'session_status', '--sender', 'me', '--approve', 'once', '--json']);
    expect(allowed.code).toBe(0);
    const tools = await cli(dir, ['tools', '--sender', 'me', '--explain', 'session_status']);
    expect(tools.stdout).toContain('approval: approvals.rules[0] asks (on-miss) for every call');
  });
});
