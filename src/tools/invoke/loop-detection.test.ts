import { describe, expect, it } from 'vitest';
import { detectLoop, hashCall, hashOutcome, LoopDetector, loopWarningNote } from './loop-detection.js';

type Rec = Parameters<typeof detectLoop>[0][number];

const rec = (toolName: string, params: unknown, outcome: string | undefined, extra: Partial<Rec> = {}): Rec => ({
  toolName,
  argsHash: hashCall(toolName, params),
  resultHash: outcome === undefined ? undefined : hashOutcome({ toolName, params, text: outcome }),
  ...extra,
});
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

  it('words the block like OpenClaw', () => {
    const v = detectLoop(times(20, () => rec('read', READ, 'same')), 'read', READ);
    expect(v).toMatchObject({ message: 'CRITICAL: Called read with identical arguments and identical outcomes 20 times. Session execution blocked to prevent runaway loops.' });
  });
});

describe('LoopDetector', () => {
  const call = (d: LoopDetector, params: unknown, outcome = 'same', session = 's', runId?: string) => {
    const verdict = d.check(session, runId, 'read', params);
    if (verdict.kind === 'block') return verdict;
    d.recordCall(session, runId, 'read', params, undefined);
    d.recordOutcome(session, runId, { toolName: 'read', params, text: outcome });
    return verdict;
  };

  it('warns once per ten repeats, then blocks and stays blocked', () => {
    const d = new LoopDetector();
    const kinds = Array.from({ length: 25 }, () => call(d, READ).kind);
    expect(kinds.slice(0, 10).every((k) => k === 'ok')).toBe(true);
    expect(kinds[10]).toBe('warn');
    expect(kinds.slice(11, 20).every((k) => k === 'ok')).toBe(true);
    expect(kinds.slice(20)).toEqual(['block', 'block', 'block', 'block', 'block']);
  });

  it('keeps sessions and runs apart', () => {
    const d = new LoopDetector();
    for (let i = 0; i < 20; i++) call(d, READ, 'same', 's1', 'run-1');
    expect(call(d, READ, 'same', 's1', 'run-1').kind).toBe('block');
    expect(call(d, READ, 'same', 's1', 'run-2').kind).toBe('ok');
    expect(call(d, READ, 'same', 's2', 'run-1').kind).toBe('ok');
  });

  it('forgets calls older than the 30-call window', () => {
    const d = new LoopDetector();
    for (let i = 0; i < 9; i++) call(d, READ);
    for (let i = 0; i < 30; i++) call(d, { path: `other-${i}` });
    expect(call(d, READ).kind).toBe('ok');
  });

  it('does not count the detector’s own blocks as outcomes', () => {
    expect(hashOutcome({ toolName: 'read', params: READ, loopVeto: true })).toBeUndefined();
  });

  it('words the warning note', () => {
    expect(loopWarningNote(10)).toBe('[System note: Tool-loop warning after 10 repeated calls. Change your approach or stop if you are not making progress.]');
  });
});
