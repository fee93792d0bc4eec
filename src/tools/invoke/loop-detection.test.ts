import { describe, expect, it } from 'vitest';
import { wrapUntrusted } from '../untrusted.js';
import { detectLoop, hashCall, hashOutcome, LoopDetector, loopWarningNote, trippedMessage } from './loop-detection.js';

type Rec = Parameters<typeof detectLoop>[0][number];

const rec = (toolName: string, params: unknown, outcome: string | undefined, extra: Partial<Rec> = {}): Rec => ({
  toolName,
  argsHash: hashCall(toolName, params),
  resultHash: outcome === undefined ? undefined : hashOutcome({ toolName, params, text: outcome }),
  ...extra,
});
/** A call that failed with `error`: no-progress evidence, as OpenClaw counts errors. */
const failed = (toolName: string, params: unknown, error: string): Rec => ({
  toolName,
  argsHash: hashCall(toolName, params),
  resultHash: hashOutcome({ toolName, params, error }),
  noProgress: true,
});
const veto = (toolName: string, params: unknown): Rec => ({ toolName, argsHash: hashCall(toolName, params), veto: true });
const times = (n: number, make: (i: number) => Rec): Rec[] => Array.from({ length: n }, (_, i) => make(i));

const READ = { path: 'a.txt' };
const POLL = { action: 'poll', sessionId: 'job-1' };

describe('detectLoop thresholds', () => {
  it.each([
    ['identical call, 9 before', times(9, () => rec('read', READ, 'same')), 'read', READ, 'ok', undefined],
    ['identical call, 10 before: warn', times(10, () => rec('read', READ, 'same')), 'read', READ, 'warn', 'generic_repeat'],
    ['identical call, 19 identical outcomes: still warn', times(19, () => rec('read', READ, 'same')), 'read', READ, 'warn', 'generic_repeat'],
    ['identical call, 20 identical outcomes: block', times(20, () => rec('read', READ, 'same')), 'read', READ, 'block', 'generic_repeat'],
    ['identical call, 20 changing outcomes: only warn', times(20, (i) => rec('read', READ, `v${i}`)), 'read', READ, 'warn', 'generic_repeat'],
    ['poll without progress, 9', times(9, () => rec('process', POLL, 'running')), 'process', POLL, 'ok', undefined],
    ['poll without progress, 10: warn', times(10, () => rec('process', POLL, 'running')), 'process', POLL, 'warn', 'known_poll_no_progress'],
    ['poll without progress, 20: block', times(20, () => rec('process', POLL, 'running')), 'process', POLL, 'block', 'known_poll_no_progress'],
    ['poll with progress, 20: fine', times(20, (i) => rec('process', POLL, `line ${i}`)), 'process', POLL, 'ok', undefined],
    ['no-progress streak of 30: global breaker', times(30, () => rec('read', READ, 'same')), 'read', READ, 'block', 'global_circuit_breaker'],
    ['unknown tool, 9 times', times(9, () => rec('nope', {}, 'x', { unknownToolName: 'nope' })), 'nope', {}, 'ok', undefined],
    ['unknown tool, 10 times: block', times(10, () => rec('nope', {}, 'x', { unknownToolName: 'nope' })), 'nope', {}, 'block', 'unknown_tool_repeat'],
    ['20 identical outcomes and 9 blocked retries: still the generic block', [...times(20, () => rec('read', READ, 'same')), ...times(9, () => veto('read', READ))], 'read', READ, 'block', 'generic_repeat'],
    ['20 identical outcomes and 10 blocked retries: the global breaker', [...times(20, () => rec('read', READ, 'same')), ...times(10, () => veto('read', READ))], 'read', READ, 'block', 'global_circuit_breaker'],
    ['blocked retries interleaved with other calls still count', [...times(20, () => rec('read', READ, 'same')), ...times(5, (i) => (i % 2 ? veto('read', READ) : rec('read', { path: `o${i}` }, 'x')))], 'read', READ, 'block', 'generic_repeat'],
    ['15 outcomes and 5 identical calls still in flight (one parallel round): block', [...times(15, () => rec('read', READ, 'same')), ...times(5, () => rec('read', READ, undefined))], 'read', READ, 'block', 'generic_repeat'],
    ['20 identical calls that a policy or a person refused (no outcome): block', times(20, () => rec('exec', { command: 'rm -rf /' }, undefined)), 'exec', { command: 'rm -rf /' }, 'block', 'generic_repeat'],
    ['19 refused calls: only the warning', times(19, () => rec('exec', { command: 'rm -rf /' }, undefined)), 'exec', { command: 'rm -rf /' }, 'warn', 'generic_repeat'],
    ['a changed outcome ends the streak, vetoes before it included', [...times(15, () => rec('read', READ, 'old')), veto('read', READ), ...times(10, () => rec('read', READ, 'new'))], 'read', READ, 'warn', 'generic_repeat'],
  ])('%s', (_label, history, tool, params, kind, detector) => {
    const verdict = detectLoop(history, tool, params);
    expect(verdict.kind).toBe(kind);
    if (verdict.kind !== 'ok') expect(verdict.detector).toBe(detector);
  });

  const A = { path: 'a' };
  const B = { path: 'b' };
  const alternating = (n: number, outcome: (i: number) => string) => times(n, (i) => rec('read', i % 2 === 0 ? A : B, outcome(i)));

  it.each([
    ['8 alternations, this makes 9', alternating(8, () => 'same'), A, 'ok'],
    ['9 alternations, this makes 10: warn', alternating(9, () => 'same'), B, 'warn'],
    ['19 alternations with stable outcomes: block', alternating(19, (i) => (i % 2 === 0 ? 'x' : 'y')), B, 'block'],
    ['19 alternations with changing outcomes: only warn', alternating(19, (i) => `v${i}`), B, 'warn'],
  ])('ping-pong: %s', (_label, history, next, kind) => {
    const verdict = detectLoop(history, 'read', next);
    expect(verdict.kind).toBe(kind);
    if (verdict.kind !== 'ok') expect(verdict.detector).toBe('ping_pong');
  });

  it('words the blocks like OpenClaw', () => {
    const v = detectLoop(times(20, () => rec('read', READ, 'same')), 'read', READ);
    expect(v).toMatchObject({ message: 'CRITICAL: Called read with identical outcomes 20 times. Session execution blocked to prevent runaway loops.' });
    const breaker = detectLoop([...times(20, () => rec('read', READ, 'same')), ...times(10, () => veto('read', READ))], 'read', READ);
    expect(breaker).toMatchObject({
      message: 'CRITICAL: read repeated identical no-progress outcomes 30 times. Session execution blocked by global circuit breaker to prevent runaway loops.',
    });
  });
});

describe('argument_churn', () => {
  const A = { path: 'missing-a' };
  const B = { path: 'missing-b' };
  const C = { path: 'missing-c' };
  const same = 'ENOENT: no such file';
  // Variants in pairs (A A B B A A …): strictly alternating calls would be a ping-pong first.
  const cycle = (n: number, variants: unknown[], error: (i: number) => string = () => same) =>
    times(n, (i) => failed('read', variants[Math.floor(i / 2) % variants.length], error(Math.floor(i / 2) % variants.length)));

  it.each([
    ['two variants, five times each, one same error: warn', cycle(10, [A, B]), A, 'warn', 10],
    ['three variants, four times each, one same error: warn', cycle(12, [A, B, C]), C, 'warn', 12],
    ['nine calls: below the threshold', cycle(9, [A, B]), A, 'ok', 0],
    ['each variant fails its own way: no shared outcome', cycle(10, [A, B], (v) => `${same} ${v}`), A, 'ok', 0],
    ['a variant seen only twice: not all variants are stable', [...cycle(10, [A, B]), failed('read', C, same), failed('read', C, same)], A, 'ok', 0],
    ['the call about to run is a new variant', cycle(10, [A, B]), C, 'ok', 0],
    ['successful calls are progress, not churn', times(10, (i) => rec('read', Math.floor(i / 2) % 2 ? A : B, 'contents')), A, 'ok', 0],
    ['another tool in between ends the run of calls', [...cycle(4, [A, B]), rec('exec', { command: 'ls' }, 'x'), ...cycle(6, [A, B])], A, 'ok', 0],
  ])('%s', (_label, history, next, kind, count) => {
    const verdict = detectLoop(history, 'read', next);
    expect(verdict.kind).toBe(kind);
    if (verdict.kind !== 'ok') expect(verdict).toMatchObject({ detector: 'argument_churn', count });
  });

  it('is only a warning, worded like OpenClaw', () => {
    expect(detectLoop(cycle(10, [A, B]), 'read', A)).toMatchObject({
      kind: 'warn',
      message: 'WARNING: read has cycled through 2 repeated argument patterns with the same stable outcome 10 times. Continued churn is treated as stalled run activity, but this tool call remains allowed.',
    });
  });

  it('counts an unchanged write as no progress', () => {
    const unchanged = (content: string): Rec => ({
      toolName: 'write',
      argsHash: hashCall('write', { path: 'a', content }),
      resultHash: hashOutcome({ toolName: 'write', params: { path: 'a', content }, details: { changed: false }, text: `wrote ${content}` }),
      noProgress: true,
    });
    expect(detectLoop(times(10, (i) => unchanged(Math.floor(i / 2) % 2 ? 'x' : 'y')), 'write', { path: 'a', content: 'x' })).toMatchObject({ kind: 'warn', detector: 'argument_churn' });
  });
});

describe('LoopDetector: history per run', () => {
  /** One call as the chain makes it: check, then record the call and its outcome, or the veto. */
  const call = (d: LoopDetector, run: string, params: unknown, outcome = 'same', tool = 'read') => {
    const verdict = d.check(run, tool, params);
    if (verdict.kind === 'block') {
      d.recordVeto(run, tool, params);
      return verdict;
    }
    d.recordCall(run, tool, params);
    d.recordOutcome(run, { toolName: tool, params, text: outcome });
    return verdict;
  };
  const kinds = (d: LoopDetector, run: string, n: number, params: unknown = READ) => Array.from({ length: n }, () => call(d, run, params).kind);

  it('warns once per ten repeats, then blocks', () => {
    const d = new LoopDetector();
    const seen = kinds(d, 'run-1', 25);
    expect(seen.slice(0, 10).every((k) => k === 'ok')).toBe(true);
    expect(seen[10]).toBe('warn');
    expect(seen.slice(11, 20).every((k) => k === 'ok')).toBe(true);
    expect(seen.slice(20)).toEqual(['block', 'block', 'block', 'block', 'block']);
  });

  it('counts each run on its own: nineteen calls in each of many runs never block', () => {
    const d = new LoopDetector();
    for (let run = 0; run < 10; run++) expect(kinds(d, `run-${run}`, 19)).not.toContain('block');
  });

  it('counts a run across the sessions it spans (a parent and its subagents share the run)', () => {
    const d = new LoopDetector();
    // The key is the run, whatever session a call came from.
    kinds(d, 'run-parent', 12);
    expect(kinds(d, 'run-parent', 9)).toEqual([...Array(8).fill('ok'), 'block']);
  });

  it('records blocked calls, so a model that keeps going reaches the breaker, which then stops the whole run', () => {
    const d = new LoopDetector();
    kinds(d, 'run-1', 20);
    const blocked = Array.from({ length: 11 }, () => call(d, 'run-1', READ));
    expect(blocked.slice(0, 10).map((v) => v.kind === 'block' && v.detector)).toEqual(Array(10).fill('generic_repeat'));
    expect(blocked[10]).toMatchObject({ kind: 'block', detector: 'global_circuit_breaker', count: 30 });
    // Tripped: any other call of the run is refused too, and says why.
    expect(call(d, 'run-1', { path: 'b.txt' }, 'x')).toMatchObject({ kind: 'block', detector: 'global_circuit_breaker', message: trippedMessage('read', 30) });
    expect(call(d, 'run-1', { command: 'ls' }, 'x', 'exec').kind).toBe('block');
    // The next run starts clean.
    expect(call(d, 'run-2', READ).kind).toBe('ok');
  });

  it('keeps blocking an unknown tool retried after its block', () => {
    const d = new LoopDetector();
    const unknown = () => {
      const verdict = d.check('run-1', 'nope', {});
      if (verdict.kind === 'block') d.recordVeto('run-1', 'nope', {}, undefined, 'nope');
      else d.recordOutcome('run-1', { toolName: 'nope', params: {}, error: 'Unknown tool "nope"', unknownToolName: 'nope' });
      return verdict.kind;
    };
    const seen = Array.from({ length: 13 }, unknown);
    expect(seen.slice(0, 10).every((k) => k === 'ok')).toBe(true);
    expect(seen.slice(10)).toEqual(['block', 'block', 'block']);
  });

  it('throttles warnings per run', () => {
    const d = new LoopDetector();
    kinds(d, 'run-1', 10);
    expect(call(d, 'run-1', READ).kind).toBe('warn');
    expect(call(d, 'run-1', READ).kind).toBe('ok');
    kinds(d, 'run-2', 10);
    expect(call(d, 'run-2', READ).kind).toBe('warn');
  });

  it('forgets calls older than the 30-call window', () => {
    const d = new LoopDetector();
    kinds(d, 'run-1', 9);
    for (let i = 0; i < 30; i++) call(d, 'run-1', { path: `other-${i}` });
    expect(call(d, 'run-1', READ).kind).toBe('ok');
  });

  it('reads the same file wrapped under fresh nonces as the same outcome, and different content as different', () => {
    const outcome = (text: string) => hashOutcome({ toolName: 'read', params: READ, text: wrapUntrusted('file:a.txt', text) });
    expect(outcome('hello')).toBe(outcome('hello'));
    expect(outcome('hello')).not.toBe(outcome('hello!'));
  });

  it('does not count the detector’s own blocks as outcomes', () => {
    expect(hashOutcome({ toolName: 'read', params: READ, loopVeto: true })).toBeUndefined();
  });

  it('words the warning note', () => {
    expect(loopWarningNote(10)).toBe('[System note: Tool-loop warning after 10 repeated calls. Change your approach or stop if you are not making progress.]');
  });
});
