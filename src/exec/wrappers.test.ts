import { describe, expect, it } from 'vitest';
import { runsAs, shellInvocation, type RunsAs } from './wrappers.js';

const DASH: RunsAs = { name: 'dash', real: 'dash' };
const BASH: RunsAs = { name: 'bash', real: 'bash' };
const BUSYBOX_SH: RunsAs = { name: 'sh', real: 'busybox' };
const ZSH: RunsAs = { name: 'zsh', real: 'zsh' };

describe('shellInvocation: which script a shell carries', () => {
  it.each<[string, RunsAs | null, string | null, string[]]>([
    // Plain: the script and its own arguments, nothing else.
    ['sh run.sh', DASH, 'run.sh', []],
    ['sh run.sh -i --login', DASH, 'run.sh', ['-i', '--login']],
    ['bash ./run.sh a b', BASH, './run.sh', ['a', 'b']],
    ['rbash run.sh', BASH, 'run.sh', []],
    // Any option, `--` or `-` before the script: not a carrier.
    ['sh -l run.sh', DASH, null, []],
    ['sh +l run.sh', DASH, null, []],
    ['sh -e run.sh', DASH, null, []],
    ['sh -o errexit run.sh', DASH, null, []],
    ['sh -- run.sh', DASH, null, []],
    ['sh - run.sh', DASH, null, []],
    ['bash --norc run.sh', BASH, null, []],
    ['bash -c run.sh', BASH, null, []],
    // Shells whose startup is not known to read nothing.
    ['sh run.sh', BUSYBOX_SH, null, []],
    ['zsh run.sh', ZSH, null, []],
    ['sh run.sh', null, null, []],
  ])('`%s` run as %j carries %j', (command, program, script, args) => {
    const inv = shellInvocation(command.split(' '), program);
    expect(inv?.script ?? null).toBe(script);
    expect(inv?.scriptArgs ?? []).toEqual(args);
  });

  it.each<[string, RunsAs | null, string | null, string | null, boolean]>([
    ['sh -c ls', DASH, 'ls', null, false],
    ['bash +c ls', BASH, 'ls', null, false],
    ['bash -oc errexit ls', BASH, 'ls', null, false],
    ['bash +lc ls', BASH, 'ls', null, true],
    ['sh -o interactive run.sh', DASH, null, 'run.sh', true],
    ['bash --rcfile rc run.sh', BASH, null, 'run.sh', false],
    ['bash --unknown run.sh', BASH, null, null, false],
    ['sh - run.sh', DASH, null, 'run.sh', false],
    ['./mysh -c id', BASH, 'id', null, false],
  ])('`%s`: payload %j, operand %j, login or interactive %s', (command, program, payload, operand, login) => {
    expect(shellInvocation(command.split(' '), program)).toMatchObject({ payload, operand, loginOrInteractive: login });
  });

  it('is null for a program that is no shell by either name', () => {
    expect(shellInvocation(['./tool', '-c', 'x'], { name: 'python3.11', real: 'python3.11' })).toBeNull();
  });
});

describe('runsAs', () => {
  it('is the real program, or the link name for a multi-call binary', () => {
    expect(runsAs({ realPath: '/usr/bin/dash', resolvedPath: '/usr/bin/sh' })).toEqual({ name: 'dash', real: 'dash' });
    expect(runsAs({ realPath: '/bin/busybox', resolvedPath: '/bin/sh' })).toEqual({ name: 'sh', real: 'busybox' });
    expect(runsAs({ realPath: null, resolvedPath: null })).toBeNull();
  });
});
