// Exec: median analysis time per command over the verdict-test corpus (the full gate: parse,
// resolve, wrappers, allowlist, safe bins, rewrite), the slowest verdicts for hostile commands
// at the caps, and the start overhead of a command on the
// sandbox host (bubblewrap) against the gateway host, for `true`.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execConfig } from '../src/config/schema/exec.js';
import { analyzeShellCommand } from '../src/exec/analysis.js';
import { execPolicyFromConfig } from '../src/exec/check.js';
import { evaluateExec, MAX_COMMAND_CHARS, MAX_COMMAND_SEGMENTS } from '../src/exec/decide.js';
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
  // The sandbox runs commands as its own unprivileged user, who must be able to enter the workspace.
  chmodSync(workspace, 0o755);
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

  // Hostile commands at and past the caps: a verdict runs on the event loop every conversation
  // shares, so the slowest of each shape is what counts (target: none over 10 ms).
  const longPolicy = execPolicyFromConfig(execConfig.parse({ allowlist: [{ pattern: '/usr/bin/git', argPattern: 'status*--force*--yes' }, { pattern: '/usr/bin/cat' }, { pattern: '/usr/bin/sh', argPattern: '*' }] }));
  const fill = (prefix: string, unit: string, chars: number) => prefix + unit.repeat(Math.floor((chars - prefix.length) / unit.length));
  const AT = MAX_COMMAND_CHARS - 16;
  const pipe = (n: number, word = 'cat') => Array.from({ length: n }, (_, i) => word.replace('#', String(i))).join(' | ');
  const LONG: Array<[string, string]> = [
    ['615 KB pipeline (once a stack overflow)', fill('cat', ' | cat', 615_000)],
    ['100 KB pipeline (once ~1 s)', fill('cat', ' | cat', 100_000)],
    [`${MAX_COMMAND_SEGMENTS} stages of distinct unknown programs`, pipe(MAX_COMMAND_SEGMENTS, 'nosuch#')],
    [`${MAX_COMMAND_SEGMENTS} stages of cat`, pipe(MAX_COMMAND_SEGMENTS)],
    ['chain of 32 KiB (refused at 64 segments)', fill('cat', '; cat', AT)],
    ['sh -c payloads nested around a pipeline', `sh -c "sh -c 'sh -c \\"${pipe(60)}\\"'"`],
    ['one 32 KiB argument', fill('cat ', 'a', AT)],
    ['16,000 one-letter arguments', fill('cat', ' a', AT)],
    ['8,000 quoted arguments', fill('cat', " 'a'", AT)],
    ['32 KiB double-quoted argument with escapes', `${fill('cat "', 'a\\"', AT)}"`],
    ['`warden invoke ` repeated (control-command check)', fill('', 'warden invoke ', AT)],
    ['32 KiB argument vs a three-star argPattern', `git status --force ${'-'.repeat(AT - 20)}`],
    ['stacked wrappers (nice, timeout, env)', fill('', 'timeout 1 nice ', AT) + 'cat'],
    ['heredocs on one line, 32 KiB', `cat ${'<<A '.repeat(Math.floor(AT / 5))}\n${'A\n'.repeat(Math.floor(AT / 5))}`.slice(0, AT)],
    ['20,000 heredocs (refused by length)', `cat ${'<<A '.repeat(20_000)}\n${'A\n'.repeat(20_000)}`],
  ];
  let worst = 0;
  for (const [what, command] of LONG) {
    const timing = await measure(() => evaluateExec(command, longPolicy, env), { iterations: 20, warmup: 3 });
    const verdict = evaluateExec(command, longPolicy, env);
    // The median is the verdict's own cost; the slowest sample also holds whatever else the machine did meanwhile.
    worst = Math.max(worst, timing.median);
    report({ name: `verdict, ${what} (${command.length.toLocaleString('en-US')} chars)`, value: fmtMs(timing.median), note: `slowest ${fmtMs(timing.p99)}; ${verdict.decision}${verdict.reason.startsWith('the command') ? ' (cap)' : ''}` });
  }
  report({ name: 'slowest hostile verdict (largest median above)', value: fmtMs(worst), note: 'target ≤ 10 ms' });

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
