import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execConfig } from '../../src/config/schema/exec.js';
import type { AllowlistEntry } from '../../src/exec/allowlist.js';
import { execPolicyFromConfig } from '../../src/exec/check.js';
import { evaluateExec, type ExecVerdict } from '../../src/exec/decide.js';
import { buildChildEnv, checkEnvOverrides } from '../../src/exec/env.js';
import { DEFAULT_PATH_DIRS } from '../../src/exec/resolve.js';
import { POSIX_SHELLS } from '../../src/exec/wrappers.js';

/**
 * Attack class: a shell that carries an allowlisted program or script runs code of its own
 * first — startup files (~/.profile, ~/.bash_profile, ~/.bashrc, $ENV, $BASH_ENV, an --rcfile)
 * or stdin — so `sh -l /usr/bin/ls` is not `ls`. The allowlist holds only ls and echo. A carrier
 * (`SHELL SCRIPT`, covered by the entry for SCRIPT) is satisfied only with no option at all;
 * every other form asks. Each form is run on the real shells of this machine with a HOME full of
 * startup files (on the gateway host HOME is real, so nothing may rely on it being empty), and
 * the files that ran are the proof of why the form must ask.
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-carriers-'));
const home = path.join(root, 'home');
const work = path.join(root, 'work');
const marks = path.join(root, 'marks');
for (const dir of [home, work, marks]) mkdirSync(dir);
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Marker = 'profile' | 'bash_profile' | 'bashrc' | 'ENV' | 'BASH_ENV' | 'rcfile';
const plant = (file: string, marker: Marker) => writeFileSync(file, `: > '${path.join(marks, marker)}'\n`);
plant(path.join(home, '.profile'), 'profile');
plant(path.join(home, '.bash_profile'), 'bash_profile');
plant(path.join(home, '.bashrc'), 'bashrc');
const envFile = path.join(root, 'env.sh');
const bashEnvFile = path.join(root, 'bash-env.sh');
const rcFile = path.join(work, 'evil.rc');
plant(envFile, 'ENV');
plant(bashEnvFile, 'BASH_ENV');
plant(rcFile, 'rcfile');
const runSh = path.join(work, 'run.sh');
writeFileSync(runSh, '#!/bin/sh\nexit 0\n');
chmodSync(runSh, 0o755);

const ATTACK = [{ pattern: '/usr/bin/ls' }, { pattern: '/usr/bin/echo' }];
const SCRIPT = '/usr/bin/echo';

function judge(command: string, allowlist: AllowlistEntry[] = ATTACK, stored: AllowlistEntry[] = [], pathDirs = DEFAULT_PATH_DIRS): ExecVerdict {
  const policy = execPolicyFromConfig(execConfig.parse({ allowlist }), stored);
  return evaluateExec(command, policy, { cwd: work, pathDirs, home, patternHome: home });
}

/**
 * What Warden would run for the verdict (the rewrite when allowed, else the approved text),
 * started as exec starts it: `/bin/sh -c`, stdin a socket (Node's pipes are socketpairs), the
 * child environment Warden builds — and with `plantVars`, ENV and BASH_ENV set as well, to show
 * what those variables would do. Returns the startup files that ran.
 */
function startupFilesRun(command: string, verdict: ExecVerdict, plantVars: boolean): Marker[] {
  for (const f of readdirSync(marks)) rmSync(path.join(marks, f));
  const env = buildChildEnv({ ENV: envFile, BASH_ENV: bashEnvFile, LANG: 'C' }, { home });
  if (plantVars) Object.assign(env, { ENV: envFile, BASH_ENV: bashEnvFile });
  spawnSync('/bin/sh', ['-c', verdict.rewritten ?? command], { cwd: work, env, input: '', stdio: 'pipe', timeout: 10_000 });
  return readdirSync(marks).sort() as Marker[];
}

/** Every POSIX shell on this machine: /etc/shells and the PATH, by the name it is invoked as. */
function installedShells(): Array<{ name: string; real: string }> {
  const names = new Set<string>(POSIX_SHELLS);
  for (const line of existsSync('/etc/shells') ? readFileSync('/etc/shells', 'utf8').split('\n') : []) {
    const name = path.basename(line.trim());
    if (line.startsWith('/') && /sh$/.test(name)) names.add(name);
  }
  const out: Array<{ name: string; real: string }> = [];
  for (const name of [...names].sort()) {
    const found = DEFAULT_PATH_DIRS.map((d) => path.join(d, name)).find((p) => existsSync(p));
    if (found) out.push({ name, real: path.basename(realpathSync(found)) });
  }
  return out;
}
const SHELLS = installedShells();

type Family = 'dash' | 'bash';
/**
 * Each form, its verdict in the attack setting and the startup files the real shell runs with
 * ENV and BASH_ENV planted (Warden's child env never carries them: see the last describe block).
 * `$SH` is the shell as invoked, `$S` the allowlisted program carried as a script, `$RC` a file
 * the agent wrote in its workspace.
 */
const FORMS: Array<[form: string, verdict: 'allow' | 'ask', runs: Record<Family, Marker[]>]> = [
  // The plain carrier: nothing but the script and the script's own arguments.
  ['$SH $S', 'allow', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH $S -i', 'allow', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH $S -l --login +i', 'allow', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH $S --rcfile $RC -i', 'allow', { dash: [], bash: ['BASH_ENV'] }],
  // Login shells: ~/.profile (dash), ~/.bash_profile (bash); /etc/profile too.
  ['$SH -l $S', 'ask', { dash: ['profile'], bash: ['BASH_ENV', 'bash_profile'] }],
  ['$SH +l $S', 'ask', { dash: ['profile'], bash: ['BASH_ENV', 'bash_profile'] }],
  ['$SH --login $S', 'ask', { dash: [], bash: ['BASH_ENV', 'bash_profile'] }],
  ['$SH -el $S', 'ask', { dash: ['profile'], bash: ['BASH_ENV', 'bash_profile'] }],
  // Interactive shells: $ENV (dash, bash --posix), ~/.bashrc (bash).
  ['$SH -i $S', 'ask', { dash: ['ENV'], bash: ['bashrc'] }],
  ['$SH -o interactive $S', 'ask', { dash: ['ENV'], bash: [] }],
  ['$SH -li $S', 'ask', { dash: ['ENV', 'profile'], bash: ['bash_profile'] }],
  ['$SH -il $S', 'ask', { dash: ['ENV', 'profile'], bash: ['bash_profile'] }],
  ['$SH --posix -i $S', 'ask', { dash: [], bash: ['ENV'] }],
  ['$SH --rcfile $RC -i $S', 'ask', { dash: [], bash: ['rcfile'] }],
  ['$SH --init-file $RC -i $S', 'ask', { dash: [], bash: ['rcfile'] }],
  ['$SH --rcfile $RC $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  // Options that read no startup file here still ask: a carrier has none.
  ['$SH -o history $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH +o history $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH -e $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH -ex $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH -o errexit $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH +e $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH -- $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH - $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH --norc $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH --noprofile $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH --posix $S', 'ask', { dash: [], bash: [] }],
  ['$SH --debugger $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH -O extglob $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  // stdin is the program, the "script" only $1.
  ['$SH -s $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  // Payloads: judged as code, never as a carrier. bash -c with a socket on stdin and no SHLVL
  // takes itself for an rshd/sshd command and reads ~/.bashrc; Warden's SHLVL=1 stops that
  // (the last describe block shows it would run without).
  ['$SH -c $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH +c $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH -ec $S', 'ask', { dash: [], bash: ['BASH_ENV'] }],
  ['$SH -lc $S', 'ask', { dash: ['profile'], bash: ['BASH_ENV', 'bash_profile'] }],
  ['$SH +lc $S', 'ask', { dash: ['profile'], bash: ['BASH_ENV', 'bash_profile'] }],
  ['$SH -ic $S', 'ask', { dash: ['ENV'], bash: ['bashrc'] }],
  ["$SH -c '$S hi' x", 'ask', { dash: [], bash: ['BASH_ENV'] }],
  // Wrappers and chains do not launder the form.
  ['env $SH -l $S', 'ask', { dash: ['profile'], bash: ['BASH_ENV', 'bash_profile'] }],
  ['nice -n 5 $SH -i $S', 'ask', { dash: ['ENV'], bash: ['bashrc'] }],
  ['timeout 5 $SH -l $S', 'ask', { dash: ['profile'], bash: ['BASH_ENV', 'bash_profile'] }],
  ['ls && $SH -l $S', 'ask', { dash: ['profile'], bash: ['BASH_ENV', 'bash_profile'] }],
  ['cd / && $SH -i $S', 'ask', { dash: ['ENV'], bash: ['bashrc'] }],
];

const instantiate = (form: string, shell: string) => form.replaceAll('$SH', shell).replaceAll('$RC', rcFile).replaceAll('$S', SCRIPT);
const familyOf = (real: string): Family | null => (real === 'dash' || real === 'bash' ? real : null);

describe('shell carriers on the shells of this machine', () => {
  it('finds sh, dash and bash', () => {
    expect(SHELLS.map((s) => s.name)).toEqual(expect.arrayContaining(['sh', 'dash', 'bash']));
  });

  const cases = SHELLS.flatMap((shell) => FORMS.map(([form, verdict, runs]) => ({ shell, form, verdict, runs })));
  it.each(cases.map((c) => [`${c.shell.name} (${c.shell.real})`, c.form, c] as const))('%s: `%s`', (_label, _form, { shell, form, verdict, runs }) => {
    const command = instantiate(form, shell.name);
    const family = familyOf(shell.real);
    const v = judge(command);
    // A shell whose startup was not verified here (zsh reads ~/.zshenv, fish its config, …) never carries.
    expect(v.decision, v.reason).toBe(family ? verdict : 'ask');
    if (family === null) return;
    expect(startupFilesRun(command, v, true), 'startup files run with ENV and BASH_ENV planted').toEqual(runs[family]);
    // What an allowed carrier runs reads nothing in the environment Warden gives it.
    if (verdict === 'allow') expect(startupFilesRun(command, v, false)).toEqual([]);
  });
});

describe('a carrier is recognised by the program that runs, not the name written', () => {
  const links = path.join(work, 'links');
  mkdirSync(links);
  symlinkSync('/usr/bin/bash', path.join(links, 'mysh'));
  symlinkSync('/usr/bin/dash', path.join(links, 'd'));
  if (existsSync('/usr/bin/python3')) symlinkSync('/usr/bin/python3', path.join(links, 'py'));
  const BASH = { pattern: '/usr/bin/bash' };
  it.each<[string, AllowlistEntry[], 'allow' | 'ask']>([
    // An entry for a shell covers a payload only with an argPattern, whatever the shell is called.
    ['./links/mysh -c id', [BASH], 'ask'],
    ['./links/mysh -lc id', [BASH], 'ask'],
    ['rbash -c id', [BASH], 'ask'],
    ['bash +c id', [BASH], 'ask'],
    ['./links/d -c id', [{ pattern: '/usr/bin/dash' }], 'ask'],
    ['./links/mysh ./run.sh', [BASH], 'allow'],
    // A linked shell carries like the shell it is, and only plainly.
    ['./links/mysh /usr/bin/echo', ATTACK, 'allow'],
    ['./links/mysh -l /usr/bin/echo', ATTACK, 'ask'],
    ['./links/d -i /usr/bin/echo', ATTACK, 'ask'],
    ['rbash -l /usr/bin/echo', ATTACK, 'ask'],
  ])('`%s` → %s', (command, allowlist, decision) => {
    expect(judge(command, allowlist).decision).toBe(decision);
  });
  it.runIf(existsSync('/usr/bin/python3'))('`./links/py -c …` is inline code like `python3 -c …`', () => {
    const v = judge("./links/py -c 'import os'", [{ pattern: '*' }]);
    expect(v.decision).toBe('ask');
    expect(v.inlineEval).toMatchObject({ interpreter: 'python3', flag: '-c' });
  });
  it('a BusyBox `sh` (ash, startup not verified here) never carries, plain or not', () => {
    const multicall = path.join(root, 'multicall');
    mkdirSync(multicall);
    writeFileSync(path.join(multicall, 'busybox'), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(multicall, 'busybox'), 0o755);
    symlinkSync('busybox', path.join(multicall, 'sh'));
    expect(judge('sh /usr/bin/echo', ATTACK, [], [multicall, ...DEFAULT_PATH_DIRS]).decision).toBe('ask');
    expect(judge('sh -l /usr/bin/echo', ATTACK, [], [multicall, ...DEFAULT_PATH_DIRS]).decision).toBe('ask');
  });
  it('`busybox sh …` runs as the sh it resolves to (the rewrite drops busybox), and carries only plainly', () => {
    const plain = judge('busybox sh /usr/bin/echo');
    expect(plain.decision).toBe('allow');
    expect(plain.rewritten).toBe(`'${realpathSync('/usr/bin/sh')}' '/usr/bin/echo'`);
    expect(judge('busybox sh -l /usr/bin/echo').decision).toBe('ask');
  });
});

describe("a carried script's arguments are matched against the script's entry", () => {
  // What allow-always stores for `./run.sh`: that argv exactly, no arguments.
  const granted = judge('./run.sh', []).allowAlways.entries.map((e) => ({ ...e, source: 'allow-always' as const }));
  it.each<[string, 'allow' | 'ask']>([
    ['./run.sh', 'allow'],
    ['sh ./run.sh', 'allow'],
    ['bash run.sh', 'allow'],
    ['sh ./run.sh --delete-everything', 'ask'],
    ['bash ./run.sh x', 'ask'],
    ['sh -e ./run.sh', 'ask'],
  ])('`%s` under a grant for `./run.sh` → %s', (command, decision) => {
    expect(granted).toEqual([{ pattern: runSh, argPattern: expect.any(String), source: 'allow-always', boundFiles: [expect.objectContaining({ path: runSh })] }]);
    expect(judge(command, [], granted).decision).toBe(decision);
  });
});

describe('the environment a plain carrier relies on', () => {
  it('Warden never hands a command ENV or BASH_ENV, inherited or requested', () => {
    const env = buildChildEnv({ ENV: envFile, BASH_ENV: bashEnvFile, SHELLOPTS: 'xtrace', BASHOPTS: 'x' }, { home });
    expect(env.ENV).toBeUndefined();
    expect(env.BASH_ENV).toBeUndefined();
    for (const key of ['ENV', 'BASH_ENV', 'SHELLOPTS', 'BASHOPTS']) expect(checkEnvOverrides({ [key]: envFile }).ok, key).toBe(false);
  });

  it('bash -c under a socket stdin reads ~/.bashrc without SHLVL; Warden sets SHLVL=1 and refuses to change it', () => {
    const run = (env: Record<string, string>) => {
      for (const f of readdirSync(marks)) rmSync(path.join(marks, f));
      spawnSync('/bin/bash', ['-c', 'true'], { cwd: work, env, input: '', stdio: 'pipe', timeout: 10_000 });
      return readdirSync(marks);
    };
    const env = buildChildEnv({ LANG: 'C' }, { home });
    expect(env.SHLVL).toBe('1');
    expect(run(env)).toEqual([]);
    const { SHLVL: _dropped, ...withoutLevel } = env;
    expect(run(withoutLevel)).toEqual(['bashrc']);
    for (const key of ['SHLVL', 'POSIXLY_CORRECT', '_POSIX2_VERSION']) expect(checkEnvOverrides({ [key]: '0' }).ok, key).toBe(false);
  });
});
