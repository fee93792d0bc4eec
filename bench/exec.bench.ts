// Exec: median analysis time per command over the verdict-test corpus (the full gate: parse,
// resolve, wrappers, allowlist, safe bins, rewrite), and the start overhead of a command on the
// sandbox host (bubblewrap) against the gateway host, for `true`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execConfig } from '../src/config/schema/exec.js';
import { analyzeShellCommand } from '../src/exec/analysis.js';
import { execPolicyFromConfig } from '../src/exec/check.js';
import { evaluateExec } from '../src/exec/decide.js';
import { buildChildEnv } from '../src/exec/env.js';
import { startCommand } from '../src/exec/run.js';
import { bwrapAvailable } from '../src/exec/sandbox.js';
import { log } from '../src/log.js';
import { ALLOWED_COMMANDS, INJECTION_ALLOWLIST, INJECTION_ATTEMPTS } from '../test/exec/command-corpus.js';
import { type Bench, fmtMs, fmtRatio, measure, summarize } from './harness.js';

const PER_COMMAND = 200;
const STARTS = 60;

const bench: Bench = async (report) => {
  log.level = 'silent';
  const workspace = mkdtempSync(path.join(tmpdir(), 'warden-bench-exec-'));
  const corpus = [...INJECTION_ATTEMPTS, ...ALLOWED_COMMANDS];
  const policy = execPolicyFromConfig(execConfig.parse(INJECTION_ALLOWLIST));
  const env = { cwd: workspace, home: workspace, pathDirs: ['/usr/local/bin', '/usr/bin', '/bin'] };

  const parseMedians: number[] = [];
  const gateMedians: number[] = [];
  for (const command of corpus) {
    parseMedians.push((await measure(() => analyzeShellCommand(command), { iterations: PER_COMMAND, warmup: 20 })).median);
    gateMedians.push((await measure(() => evaluateExec(command, policy, env), { iterations: PER_COMMAND, warmup: 20 })).median);
  }
  const parse = summarize(parseMedians);
  const gate = summarize(gateMedians);
  report({ name: `shell analysis only, median over ${corpus.length} commands`, value: fmtMs(parse.median), note: `p99 ${fmtMs(parse.p99)}` });
  report({ name: `full verdict (checkExec), median over ${corpus.length} commands`, value: fmtMs(gate.median), note: `p99 ${fmtMs(gate.p99)}` });

  // Long hostile commands: each shape once took seconds to minutes (quadratic or worse), and a
  // verdict runs on the event loop every conversation shares.
  const longPolicy = execPolicyFromConfig(execConfig.parse({ allowlist: [{ pattern: '/usr/bin/git', argPattern: 'status*--force*--yes' }, { pattern: '/usr/bin/cat' }] }));
  const LONG: Array<[string, string]> = [
    ['`warden invoke ` × 8,000 (control-command check)', 'warden invoke '.repeat(8_000)],
    ['20,000 heredocs on one line', `cat ${'<<A '.repeat(20_000)}\n${'A\n'.repeat(20_000)}`],
    ['200,000-char argument vs a three-star argPattern', `git status --force ${'-'.repeat(200_000)}`],
  ];
  for (const [what, command] of LONG) {
    const timing = await measure(() => evaluateExec(command, longPolicy, env), { iterations: 3, warmup: 1 });
    report({ name: `full verdict, ${what} (${command.length.toLocaleString('en-US')} chars)`, value: fmtMs(timing.median), note: `p99 ${fmtMs(timing.p99)}` });
  }

  const childEnv = buildChildEnv({ LANG: 'C.UTF-8' }, { home: workspace });
  const start = (host: 'gateway' | 'sandbox') => async () => {
    const job = startCommand({ script: 'true', label: 'true', host, workspace, cwd: workspace, env: childEnv, maxOutputChars: 1000 });
    await job.done;
    if (job.exitCode !== 0) throw new Error(`true failed on ${host}: ${job.status} ${job.error ?? ''}`);
  };
  const gateway = await measure(start('gateway'), { iterations: STARTS, warmup: 5 });
  report({ name: 'exec start→exit of `true`, gateway host (sh -c)', value: fmtMs(gateway.median), note: `p99 ${fmtMs(gateway.p99)}` });
  if (bwrapAvailable()) {
    const sandbox = await measure(start('sandbox'), { iterations: STARTS, warmup: 5 });
    report({
      name: 'exec start→exit of `true`, sandbox host (bubblewrap)',
      value: fmtMs(sandbox.median),
      note: `p99 ${fmtMs(sandbox.p99)}; ${fmtRatio(sandbox.median / gateway.median)} gateway, +${fmtMs(sandbox.median - gateway.median)}`,
    });
  } else report({ name: 'exec start of `true`, sandbox host', value: 'n/a', note: 'bubblewrap not installed' });
  rmSync(workspace, { recursive: true, force: true });
};

export default bench;
