// Plays a Warden whose process holds descriptors a sandboxed command must never see (see
// sandbox-descriptors.test.ts): ones it inherited without close-on-exec (placed by the test at
// fixed numbers) and ones it opened itself — a SQLite database, a log file, listening sockets.
// Runs the probe script in the sandbox under each launch configuration and prints one JSON line each.
import { mkdtempSync, openSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { closesOnExec } from '../../src/exec/descriptors.js';
import { buildChildEnv } from '../../src/exec/env.js';
import { startCommand } from '../../src/exec/run.js';
import { sandboxReadiness } from '../../src/exec/sandbox-probe.js';
import { SANDBOX_HOME, type SandboxIdentity } from '../../src/exec/sandbox.js';

const [workspace, configsJson, script] = process.argv.slice(2) as [string, string, string];
const configs = JSON.parse(configsJson) as Array<{ name: string; identity: SandboxIdentity; egress?: { socket: string; node: string } }>;

const own = mkdtempSync(path.join(tmpdir(), 'warden-fds-own-'));
const db = new Database(path.join(own, 'warden.sqlite'));
db.pragma('journal_mode = WAL');
db.exec('create table t (x); insert into t values (1)');
const logFd = openSync(path.join(own, 'warden.log'), 'a');
const logger = pino(pino.destination({ fd: logFd, sync: true }));
logger.info('open');
const unix = net.createServer().listen(path.join(own, 'control.sock'));
const tcp = net.createServer().listen(0, '127.0.0.1');
await Promise.all([new Promise((r) => unix.once('listening', r)), new Promise((r) => tcp.once('listening', r))]);

// What this process would hand every child before Warden closes anything: the test checks the
// inherited descriptors are really here, without close-on-exec.
const held = readdirSync('/proc/self/fd').map(Number).filter((fd) => {
  try {
    return fd > 2 && closesOnExec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')) === false;
  } catch {
    return false;
  }
});
process.stdout.write(`${JSON.stringify({ name: 'held', held })}\n`);

for (const config of configs) {
  const ready = await sandboxReadiness(workspace, config.identity, []);
  if (!ready.ok) {
    process.stdout.write(`${JSON.stringify({ name: config.name, error: ready.error })}\n`);
    continue;
  }
  const job = startCommand({
    script,
    label: 'descriptors',
    host: 'sandbox',
    workspace,
    cwd: workspace,
    env: buildChildEnv({ LANG: 'C.UTF-8' }, { home: SANDBOX_HOME }),
    maxOutputChars: 200_000,
    timeoutMs: 30_000,
    identity: config.identity,
    ...(config.egress ? { egress: config.egress } : {}),
  });
  job.endInput();
  await job.done;
  process.stdout.write(`${JSON.stringify({ name: config.name, exitCode: job.exitCode, output: job.outputText() })}\n`);
}
db.close();
unix.close();
tcp.close();
process.exit(0);
