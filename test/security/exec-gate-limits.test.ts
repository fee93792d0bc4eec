import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execConfig } from '../../src/config/schema/exec.js';
import { parseConfig } from '../../src/config/index.js';
import { analyzeShellCommand } from '../../src/exec/analysis.js';
import { execPolicyFromConfig } from '../../src/exec/check.js';
import { checkExec } from '../../src/app/exec-check.js';
import { evaluateExec, MAX_COMMAND_CHARS, MAX_COMMAND_SEGMENTS, type ExecVerdict } from '../../src/exec/decide.js';
import { DEFAULT_PATH_DIRS } from '../../src/exec/resolve.js';

/**
 * Attack class: a command built to make the verdict itself expensive. The verdict runs on the
 * event loop every conversation shares, so a model (or whoever steers it) that sends a command
 * of a million characters, ten thousand pipeline stages or shell payloads nested around a long
 * pipeline stalls every chat — or, with a 615 KB pipeline, overflowed the stack and threw.
 * Every shape is refused past the caps with a message that says what to do, in every security
 * mode that judges commands; at the caps the verdict comes back as usual. (How long a verdict
 * takes is measured by `npm run bench`, not asserted here.)
 */
const work = mkdtempSync(path.join(tmpdir(), 'warden-gate-limits-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const env = { cwd: work, home: work, pathDirs: DEFAULT_PATH_DIRS };
const allowlist = execPolicyFromConfig(execConfig.parse({ allowlist: [{ pattern: '/usr/bin/cat' }, { pattern: '/usr/bin/sh', argPattern: '*' }] }));
const full = execPolicyFromConfig(execConfig.parse({ security: 'full' }));
const fullAlways = execPolicyFromConfig(execConfig.parse({ security: 'full', ask: 'always' }));
const disabled = execPolicyFromConfig(execConfig.parse({ security: 'deny' }));

const TOO_LONG = /^the command is [\d,]+ characters long; exec takes at most 32,768: split the work into shorter commands or put it in a script file$/;
const TOO_MANY = /^the command has more than 64 commands \(pipeline stages, chained commands and shell -c payloads count alike\); exec judges at most 64/;

const pipe = (n: number) => Array.from({ length: n }, () => 'cat').join(' | ');
const fill = (prefix: string, unit: string, chars: number) => prefix + unit.repeat(Math.ceil((chars - prefix.length) / unit.length));

describe('commands past the length cap are refused, whatever their shape', () => {
  const over = MAX_COMMAND_CHARS + 1;
  it.each([
    ['one long argument', fill('cat ', 'a', over)],
    ['many arguments', fill('cat', ' a', over)],
    ['many quoted arguments', fill('cat', " 'a'", over)],
    ['a 615 KB pipeline (once a stack overflow)', fill('cat', ' | cat', 615_000)],
    ['a long chain', fill('cat', '; cat', 200_000)],
    ['heredocs on one line', `cat ${'<<A '.repeat(20_000)}\n${'A\n'.repeat(20_000)}`],
    ['a long double-quoted argument with escapes', fill('cat "', 'a\\"', over) + '"'],
    ['a control-command lookalike repeated', 'warden invoke '.repeat(8_000)],
    ['a shell payload around a long pipeline', `sh -c '${fill('cat', ' | cat', over)}'`],
    ['a comment after a short command', fill('cat #', 'x', over)],
    ['wrappers stacked', fill('', 'nice ', over) + 'cat'],
  ])('%s', (_, command) => {
    expect(command.length).toBeGreaterThan(MAX_COMMAND_CHARS);
    for (const policy of [allowlist, full, fullAlways]) {
      const verdict = evaluateExec(command, policy, env);
      expect(verdict.decision).toBe('deny');
      expect(verdict.reason).toMatch(TOO_LONG);
      expect(verdict.rewritten).toBeNull();
      expect(verdict.allowAlways.offered).toBe(false);
    }
    // With exec disabled, that is still what the verdict says.
    expect(evaluateExec(command, disabled, env).reason).toBe('exec is disabled (tools.exec.security = deny)');
  });

  it('the CLI and the bot reach it through the same gate', () => {
    const parsed = parseConfig({ tools: { exec: { host: 'gateway' } } });
    if (!parsed.ok) throw parsed.error;
    const verdict = checkExec(parsed.value.config, fill('cat', ' | cat', 615_000), { agentId: 'main', provider: 'cli', chat: 'dm', senderIsOwner: true, spawnDepth: 0 }, { cwd: work });
    expect(verdict.decision).toBe('deny');
    expect(verdict.reason).toMatch(TOO_LONG);
  });
});

describe('commands with more segments than the cap are refused', () => {
  const over = MAX_COMMAND_SEGMENTS + 1;
  it.each([
    ['a pipeline one stage too long', pipe(over)],
    ['a chain one command too long', Array.from({ length: over }, () => 'cat').join(' && ')],
    ['chains of pipelines', Array.from({ length: 33 }, () => 'cat | cat').join(' ; ')],
    ['a shell payload that adds the one too many', `${pipe(MAX_COMMAND_SEGMENTS - 1)} | sh -c '${pipe(2)}'`],
    ['payloads nested around a long pipeline', `sh -c "sh -c 'sh -c \\"${pipe(over)}\\"'"`],
    ['thousands of stages of unknown programs', Array.from({ length: 3000 }, (_, i) => `nosuch${i}`).join('|')],
  ])('%s', (_, command) => {
    expect(command.length).toBeLessThanOrEqual(MAX_COMMAND_CHARS);
    for (const policy of [allowlist, full, fullAlways]) {
      const verdict = evaluateExec(command, policy, env);
      expect(verdict.decision).toBe('deny');
      expect(verdict.reason).toMatch(TOO_MANY);
      expect(verdict.rewritten).toBeNull();
    }
  });
});

describe('at the caps the verdict is the usual one', () => {
  const allowed = (v: ExecVerdict) => [v.decision, v.satisfied];
  it('a pipeline of exactly the most segments', () => {
    const verdict = evaluateExec(pipe(MAX_COMMAND_SEGMENTS), allowlist, env);
    expect(allowed(verdict)).toEqual(['allow', true]);
    expect(verdict.segments).toHaveLength(MAX_COMMAND_SEGMENTS);
    expect(verdict.rewritten).toBe(Array.from({ length: MAX_COMMAND_SEGMENTS }, () => "'/usr/bin/cat'").join(' | '));
  });

  it('a command of exactly the most characters', () => {
    const command = `cat ${'a'.repeat(MAX_COMMAND_CHARS - 4)}`;
    expect(command).toHaveLength(MAX_COMMAND_CHARS);
    expect(allowed(evaluateExec(command, allowlist, env))).toEqual(['allow', true]);
  });

  it('an unknown program among many known ones still misses, by name', () => {
    const verdict = evaluateExec(`${pipe(MAX_COMMAND_SEGMENTS - 1)} | nosuchprogram`, allowlist, env);
    expect(verdict.decision).toBe('ask');
    expect(verdict.reason).toContain(`segment ${MAX_COMMAND_SEGMENTS} \`nosuchprogram\`: \`nosuchprogram\` not found in PATH`);
  });

  it('a name looked up once per verdict still means what it means in each place (`./cat` is not `cat`)', () => {
    writeFileSync(path.join(work, 'cat'), '#!/bin/sh\n');
    chmodSync(path.join(work, 'cat'), 0o755);
    const verdict = evaluateExec('./cat | cat | ./cat | /usr/bin/cat', allowlist, env);
    expect(verdict.segments.map((s) => s.resolved)).toEqual([path.join(work, 'cat'), '/usr/bin/cat', path.join(work, 'cat'), '/usr/bin/cat']);
    expect(verdict.decision).toBe('ask');
  });

  it('the analysis of a 615 KB pipeline without a cap returns instead of overflowing the stack', () => {
    const result = analyzeShellCommand(fill('cat', ' | cat', 615_000));
    expect(result.ok && result.parts[0]!.pipeline.length).toBeGreaterThan(100_000);
    expect(analyzeShellCommand(fill('cat', ' | cat', 615_000), { maxSegments: 64 })).toMatchObject({ ok: false, tooManySegments: true });
  });
});
