// Patterns written by others (exec argPatterns, schema patterns, guard rules) against the model's
// text: the whole exec verdict with hostile regex argPatterns at the longest command exec takes
// (median, p99, slowest single run; target: none over 10 ms), the linear engine against V8's
// backtracking one on patterns V8 handles, and V8 on a catastrophic pattern at a few dozen
// characters (it doubles per character; the linear engine decides 32 KiB).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { execConfig } from '../src/config/schema/exec.js';
import { execPolicyFromConfig } from '../src/exec/check.js';
import { evaluateExec, MAX_COMMAND_CHARS } from '../src/exec/decide.js';
import { log } from '../src/log/log.js';
import { compileLinearRegex } from '../src/util/linear-regex.js';
import { type Bench, fmtMs, fmtRatio, measure, summarize } from './harness.js';

const RUNS = 200;

const bench: Bench = async (report) => {
  log.level = 'silent';
  const home = mkdtempSync(path.join(tmpdir(), 'warden-bench-regex-'));
  const env = { cwd: home, home, pathDirs: ['/usr/bin', '/bin'] };
  const fill = (chars: number, prefix: string, unit: string, suffix = '') => prefix + unit.repeat(Math.floor((chars - prefix.length - suffix.length) / unit.length)) + suffix;

  // [pattern, prefix, unit, suffix]: the arguments the model writes against each pattern.
  const shapes: Array<[string, string, string, string]> = [
    ['^(-+)+x$', 'tar ', '-', ''],
    ['^(-|--)+x$', 'tar ', '-', ''],
    ['^(\\w+\\s?)*$', 'tar ', 'file ', '!'],
    ['^.*.*.*=x$', 'tar ', 'a', ''],
    ['^-[a-z]*f (?:[a-z0-9_./-]+ ?){1,50}$', 'tar -cf ', 'a/', ''],
    ['^(?:--[a-z-]+(?:=[^ ]*)? )*[^ ]+\\.tar$', 'tar ', '--opt=v ', 'x'],
  ];
  // Each at the longest command exec takes (past the pattern's budget: decided without running
  // it) and at the pattern's budget (the longest text it runs on).
  const hostile: Array<[string, string, string]> = [];
  for (const [argPattern, prefix, unit, suffix] of shapes) {
    const compiled = compileLinearRegex(argPattern);
    if (!compiled.ok) throw new Error(compiled.error);
    hostile.push([argPattern, fill(MAX_COMMAND_CHARS - 8, prefix, unit, suffix), 'longest']);
    hostile.push([argPattern, fill(compiled.regex.maxInput + 4, prefix, unit, suffix), 'budget']);
  }
  let worstWall = 0;
  let worstCpu = 0;
  for (const [argPattern, command, at] of hostile) {
    const policy = execPolicyFromConfig(execConfig.parse({ allowlist: [{ pattern: '/usr/bin/tar', argPattern }] }));
    for (let i = 0; i < 10; i++) evaluateExec(command, policy, env);
    // Wall and CPU time of each run: on a shared machine a run's wall time includes time the
    // process was not scheduled; its CPU time is what the verdict itself cost.
    const wall = new Float64Array(RUNS);
    const cpu = new Float64Array(RUNS);
    for (let i = 0; i < RUNS; i++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      evaluateExec(command, policy, env);
      wall[i] = performance.now() - t0;
      const used = process.cpuUsage(c0);
      cpu[i] = (used.user + used.system) / 1000;
    }
    const w = summarize(Array.from(wall));
    const c = summarize(Array.from(cpu));
    worstWall = Math.max(worstWall, w.max);
    worstCpu = Math.max(worstCpu, c.max);
    report({ name: `verdict, ${at === 'budget' ? 'at budget' : 'longest'} ${(command.length / 1024).toFixed(1)} KiB, ${argPattern}`.slice(0, 58), value: fmtMs(w.median), note: `p99 ${fmtMs(w.p99)}, max ${fmtMs(w.max)} (CPU max ${fmtMs(c.max)})` });
  }
  report({ name: 'slowest single verdict with hostile regex argPatterns', value: fmtMs(worstWall), note: `CPU ${fmtMs(worstCpu)}; ${worstWall <= 10 ? '≤ 10 ms ✓' : '> 10 ms ✗'}` });

  // Patterns V8 decides quickly: what the linear engine costs against the engine it replaces.
  const safe: Array<[string, string]> = [
    ['^status( -s)?$', 'status -s'],
    ['^push (origin|upstream) [a-z0-9/_-]+$', 'push origin feature/regex-engine'],
    ['\\bssh\\b.*\\bprod', `${'ls -la '.repeat(200)}ssh deploy@prod-db`],
    ['^[a-z0-9-]{1,63}$', 'my-repository-name'],
  ];
  for (const [source, text] of safe) {
    const compiled = compileLinearRegex(source, 'i');
    if (!compiled.ok) throw new Error(compiled.error);
    const v8 = new RegExp(source, 'i');
    const linear = await measure(() => compiled.regex.test(text), { iterations: 2_000 });
    const backtracking = await measure(() => v8.test(text), { iterations: 2_000 });
    report({ name: `linear engine, /${source}/ on ${text.length} chars`.slice(0, 58), value: fmtMs(linear.median), note: `V8 ${fmtMs(backtracking.median)}, ${fmtRatio(linear.median / backtracking.median)} of V8` });
  }

  // The class itself: V8 on a nested quantifier, a few characters at a time.
  const catastrophic = /^(-+)+x$/;
  catastrophic.test('-'.repeat(12)); // compiled before the first timed call
  const compiled = compileLinearRegex('^(-+)+x$');
  if (!compiled.ok) throw new Error(compiled.error);
  for (const n of [20, 22, 24]) {
    const text = '-'.repeat(n);
    const start = performance.now();
    catastrophic.test(text);
    const v8 = performance.now() - start;
    report({ name: `V8 backtracking, /^(-+)+x$/ on ${n} dashes`, value: fmtMs(v8), note: n === 24 ? 'doubles with each character' : '' });
  }
  const longest = '-'.repeat(compiled.regex.maxInput);
  const linear = await measure(() => compiled.regex.test(longest), { iterations: 50, warmup: 5 });
  report({ name: `linear engine, /^(-+)+x$/ on ${longest.length.toLocaleString('en-US')} dashes (its budget)`, value: fmtMs(linear.median), note: `max ${fmtMs(linear.max)}` });
};

export default bench;
