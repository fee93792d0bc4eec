import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildChildEnv, checkEnvOverrides } from './env.js';
import { isGitHardeningVariable } from './git-env.js';
import { startCommand, type StartSpec } from './run.js';
import { sandboxReadiness } from './sandbox-probe.js';
import { bwrapAvailable, bwrapArgs, resolveExecHost, sandboxIdentity } from './sandbox.js';

const root = mkdtempSync(path.join(tmpdir(), 'warden-run-'));
const workspace = path.join(root, 'workspace');
const outside = path.join(root, 'outside');
mkdirSync(workspace);
mkdirSync(outside);
writeFileSync(path.join(outside, 'secret.txt'), 'top secret\n');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Processes of a process group that are not zombies, from /proc. */
function liveGroupMembers(pgid: number): number[] {
  const live: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') live.push(Number(entry));
  }
  return live;
}

const env = buildChildEnv({ LANG: 'C.UTF-8' }, { home: workspace });

async function run(script: string, over: Partial<StartSpec> = {}) {
  const job = startCommand({ script, label: script, host: 'gateway', workspace, cwd: workspace, env, maxOutputChars: 200_000, ...over });
  await job.done;
  return job;
}
const sandboxed = (script: string, over: Partial<StartSpec> = {}) => run(script, { host: 'sandbox', ...over });

describe('the child environment', () => {
  it("carries none of Warden's secrets", async () => {
    const parent = {
      DISCORD_TOKEN: 'd-secret',
      SLACK_BOT_TOKEN: 'xoxb-secret',
      SLACK_SIGNING_SECRET: 's-secret',
      OPENAI_API_KEY: 'sk-secret',
      ANTHROPIC_API_KEY: 'a-secret',
      GEMINI_API_KEY: 'g-secret',
      AWS_SECRET_ACCESS_KEY: 'aws-secret',
      WARDEN_DATA_DIR: '/srv/warden',
      NODE_OPTIONS: '--require /tmp/evil.js',
      LD_PRELOAD: '/tmp/evil.so',
      LANG: 'en_US.UTF-8',
      LC_ALL: 'C',
      TERM: 'xterm',
    };
    const childEnv = buildChildEnv(parent, { home: workspace });
    // Besides git's hardened environment (git-env.ts), only these pass.
    expect(Object.keys(childEnv).filter((k) => !isGitHardeningVariable(k)).sort()).toEqual(['HOME', 'LANG', 'LC_ALL', 'PATH', 'SHELL', 'SHLVL', 'TERM']);
    const job = await run('env', { env: childEnv });
    const out = job.outputText();
    for (const secret of ['d-secret', 'xoxb', 's-secret', 'sk-secret', 'a-secret', 'g-secret', 'aws-secret', 'evil', 'WARDEN_DATA_DIR']) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain(`HOME=${workspace}`);
  });

  it.each([
    ['NODE_OPTIONS', 'load code'],
    ['node_options', 'load code'],
    ['LD_PRELOAD', 'load code'],
    ['LD_LIBRARY_PATH', 'load code'],
    ['DYLD_INSERT_LIBRARIES', 'load code'],
    ['BASH_FUNC_ls%%', 'valid variable name'],
    ['BASH_ENV', 'load code'],
    ['PYTHONPATH', 'load code'],
    ['GIT_SSH_COMMAND', 'load code'],
    ['GIT_CONFIG_COUNT', 'sets it'],
    ['NPM_CONFIG_REGISTRY', 'sets it'],
    ['TF_VAR_x', 'sets it'],
    ['PATH', 'sets it'],
    ['HOME', 'sets it'],
    ['HTTPS_PROXY', 'sets it'],
    ['https_proxy', 'sets it'],
    ['SSL_CERT_FILE', 'sets it'],
    ['EDITOR', 'sets it'],
    // Keys that make an allowlisted program run other code or trust other servers (reference lists).
    ['BROWSER', 'load code'],
    ['PYTHONWARNINGS', 'load code'],
    ['PYTHONBREAKPOINT', 'load code'],
    ['GIT_SEQUENCE_EDITOR', 'load code'],
    ['GIT_WORK_TREE', 'load code'],
    ['CC', 'load code'],
    ['RUSTC_WRAPPER', 'load code'],
    ['DOTNET_STARTUP_HOOKS', 'load code'],
    ['JAVA_OPTS', 'load code'],
    ['SSLKEYLOGFILE', 'load code'],
    ['KUBECONFIG', 'load code'],
    ['GIT_PROXY_COMMAND', 'sets it'],
    ['CLASSPATH', 'sets it'],
    ['PHPRC', 'sets it'],
    ['LUA_PATH', 'sets it'],
    ['GEM_PATH', 'sets it'],
    ['PIP_INDEX_URL', 'sets it'],
    ['HISTFILE', 'sets it'],
    ['CORECLR_PROFILER_PATH', 'sets it'],
    ['A=B', 'valid variable name'],
    ['', 'valid variable name'],
  ])('refuses the override %s', (key, why) => {
    const r = checkEnvOverrides({ [key]: 'x' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(new RegExp(`^Security violation: environment override refused: .*${why}`));
  });
  it('accepts ordinary overrides and passes them on', async () => {
    expect(checkEnvOverrides({ FOO: 'bar', RUST_LOG: 'debug' })).toEqual({ ok: true });
    expect(checkEnvOverrides({ FOO: 'a\0b' }).ok).toBe(false);
    const job = await run('echo "$FOO"', { env: buildChildEnv({}, { home: workspace, overrides: { FOO: 'bar' } }) });
    expect(job.outputText()).toBe('bar\n');
  });
});

describe('running on the gateway host', () => {
  it('captures output and the exit code', async () => {
    const job = await run('echo out; echo err >&2; exit 3');
    expect(job.status).toBe('exited');
    expect(job.exitCode).toBe(3);
    expect(job.outputText()).toBe('out\nerr\n');
  });
  it('kills a command at its timeout', async () => {
    const started = Date.now();
    const job = await run('sleep 30', { timeoutMs: 200 });
    expect(job.status).toBe('timed-out');
    expect(Date.now() - started).toBeLessThan(10_000);
  });
  it('SIGKILLs a process that ignores SIGTERM, children included', async () => {
    const job = startCommand({
      script: "trap '' TERM; sh -c \"trap '' TERM; echo ready; sleep 60\" & while :; do sleep 0.05; done",
      label: 'stubborn',
      host: 'gateway',
      workspace,
      cwd: workspace,
      env,
      maxOutputChars: 1000,
      killGraceMs: 200,
    });
    // Killed only once both shells ignore SIGTERM (the child says so), however slow the machine.
    await vi.waitFor(() => expect(job.outputText()).toContain('ready'), { timeout: 20_000, interval: 20 });
    const pid = job.pid!;
    job.kill();
    await job.done;
    expect(job.status).toBe('killed');
    expect(job.signal).toBe('SIGKILL');
    // Killed members may linger as zombies when PID 1 does not reap them; none may still run.
    // A SIGKILLed process ends when the scheduler next runs it: on a loaded machine that is a
    // moment after the job's own shell has gone, so the test waits for it, within a limit.
    await vi.waitFor(() => expect(liveGroupMembers(pid)).toEqual([]), { timeout: 10_000, interval: 50 });
  });
  it('caps a flood of output, keeping the newest part and saying what was dropped', async () => {
    const job = await run("head -c 3000000 /dev/zero | tr '\\0' a; echo END", { maxOutputChars: 1000, maxPendingChars: 100 });
    expect(job.droppedChars).toBe(3_000_004 - 1000);
    const text = job.outputText();
    expect(text).toMatch(/^\[output capped: the first 2999004 characters were dropped\]\n/);
    expect(text.endsWith('aaaEND\n')).toBe(true);
  });
  it('reports a command that cannot start', async () => {
    const job = startCommand({ script: 'true', label: 'x', host: 'gateway', workspace, cwd: path.join(root, 'missing-dir'), env, maxOutputChars: 100 });
    await job.done;
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/ENOENT|cwd/i);
  });
});

describe.skipIf(!bwrapAvailable())('the bubblewrap sandbox', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    // What the exec tool does before a sandboxed command: the host gives the isolation, the
    // workspace belongs to the sandbox user.
    expect(await sandboxReadiness(workspace, sandboxIdentity(), [])).toEqual({ ok: true });
    server = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => server.close());

  it('lets a command write in the workspace', async () => {
    const job = await sandboxed('echo made > inside.txt && cat inside.txt');
    expect(job.exitCode).toBe(0);
    expect(readFileSync(path.join(workspace, 'inside.txt'), 'utf8')).toBe('made\n');
  });

  it.each([
    ['the system', 'touch /usr/pwned'],
    ['/etc', 'echo x > /etc/pwned'],
    ['a sibling of the workspace', `echo x > ${path.join(outside, 'pwned')}`],
    ['the parent of the workspace via ..', 'echo x > ../outside/pwned'],
    ['a directory symlink out of the workspace', 'echo x > escape-dir/pwned'],
    ['a file symlink out of the workspace', 'echo x > escape-file'],
    ['a hardlink made inside the sandbox', 'ln /etc/passwd hl && echo x >> hl'],
  ])('cannot write outside the workspace: %s', async (_what, script) => {
    rmSync(path.join(workspace, 'escape-dir'), { force: true });
    rmSync(path.join(workspace, 'escape-file'), { force: true });
    symlinkSync(outside, path.join(workspace, 'escape-dir'));
    symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'escape-file'));
    const job = await sandboxed(script);
    expect(job.exitCode).not.toBe(0);
    expect(existsSync(path.join(outside, 'pwned'))).toBe(false);
    expect(existsSync('/usr/pwned')).toBe(false);
    expect(existsSync('/etc/pwned')).toBe(false);
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('cannot read files outside the workspace that are not system files', async () => {
    const job = await sandboxed(`cat ${path.join(outside, 'secret.txt')}; cat escape-file; ls /root /home 2>&1; cat /etc/shadow`);
    expect(job.outputText()).not.toContain('top secret');
  });

  it('has a private /tmp', async () => {
    const marker = `warden-marker-${process.pid}`;
    const job = await sandboxed(`echo x > /tmp/${marker} && ls /tmp`);
    expect(job.exitCode).toBe(0);
    expect(existsSync(path.join('/tmp', marker))).toBe(false);
  });

  it('cannot open a network socket, while the same command reaches the host server from the gateway', async () => {
    const probe = `node -e "require('net').connect(${port}, '127.0.0.1').on('data', (d) => { process.stdout.write(String(d)); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(7); })"`;
    const gateway = await run(probe);
    expect(gateway.outputText()).toBe('hello\n');
    const inside = await sandboxed(probe);
    expect(inside.exitCode).toBe(7);
    expect(inside.outputText()).toMatch(/ECONNREFUSED|ENETUNREACH|EADDRNOTAVAIL/);
    const ifaces = await sandboxed('cat /proc/net/dev');
    expect(ifaces.outputText()).not.toMatch(/eth0|ens|enp|wlan/);
  });

  it('runs in its own PID namespace', async () => {
    const job = await sandboxed('echo $$; ls /proc | grep -c "^[0-9]"');
    const [ownPid, processCount] = job.outputText().trim().split('\n').map(Number);
    expect(ownPid).toBeLessThan(10);
    expect(processCount).toBeLessThan(10);
  });

  it('ends the whole sandbox when the job is killed', async () => {
    const job = startCommand({ script: 'sleep 60', label: 'sleep', host: 'sandbox', workspace, cwd: workspace, env, maxOutputChars: 100, killGraceMs: 200 });
    await new Promise((r) => setTimeout(r, 300));
    job.kill();
    await job.done;
    expect(job.running).toBe(false);
  });

  it('binds the workspace after the private /tmp so a workspace under /tmp stays visible', () => {
    const args = bwrapArgs({ workspace, cwd: workspace, argv: ['/bin/sh', '-c', 'true'] });
    expect(args.indexOf('--bind')).toBeGreaterThan(args.indexOf('/tmp'));
    expect(args).toEqual(expect.arrayContaining(['--unshare-net', '--unshare-pid', '--die-with-parent', '--new-session']));
  });
});

describe('choosing the host', () => {
  it('uses the configured host, else sandbox when bubblewrap exists, else gateway', () => {
    expect(resolveExecHost('gateway', true)).toBe('gateway');
    expect(resolveExecHost('sandbox', false)).toBe('sandbox');
    expect(resolveExecHost(undefined, true)).toBe('sandbox');
    expect(resolveExecHost(undefined, false)).toBe('gateway');
  });
});
