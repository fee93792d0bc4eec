// Plays a Warden that starts a long sandboxed command and is then killed (see sandbox-root.test.ts).
import { buildChildEnv } from '../../src/exec/env.js';
import { startCommand } from '../../src/exec/run.js';
import { sandboxReadiness } from '../../src/exec/sandbox-probe.js';
import { SANDBOX_HOME, type SandboxIdentity } from '../../src/exec/sandbox.js';

const [workspace, identityJson, marker, killAfter] = process.argv.slice(2) as [string, string, string, string | undefined];
const identity = JSON.parse(identityJson) as SandboxIdentity;
const ready = await sandboxReadiness(workspace, identity, []);
if (!ready.ok) {
  process.stderr.write(`${ready.error}\n`);
  process.exit(3);
}
startCommand({
  script: `sleep ${marker}`,
  label: 'sleep',
  host: 'sandbox',
  workspace,
  cwd: workspace,
  env: buildChildEnv({}, { home: SANDBOX_HOME }),
  maxOutputChars: 1000,
  identity,
});
process.stdout.write('started\n');
// With a delay: this Warden dies that many ms after the spawn, with its event loop free (the
// launch reads its seccomp program and environment from Warden first), mid-start.
if (killAfter !== undefined) setTimeout(() => process.kill(process.pid, 'SIGKILL'), Number(killAfter));
setInterval(() => {}, 1000);
