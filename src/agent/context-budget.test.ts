import { describe, expect, it } from 'vitest';
import type { Message, ToolResultMessage } from '../models/types.js';
import { chooseCut } from './compaction.js';
import { capToolResult, CLEARED_TOOL_RESULT, perResultCapChars, pruneToolResults, truncateText } from './context-budget.js';
import type { TranscriptEntry } from './types.js';

const user = (t: string): Message => ({ role: 'user', content: [{ type: 'text', text: t }] });
const assistant = (t: string, call?: string): Message => ({
  role: 'assistant',
  content: [{ type: 'text', text: t }, ...(call ? [{ type: 'toolCall' as const, id: call, name: 'read', args: {} }] : [])],
});
const result = (id: string, t: string): ToolResultMessage => ({ role: 'toolResult', toolCallId: id, toolName: 'read', content: [{ type: 'text', text: t }], isError: false });
const textOf = (m: Message) => m.content.map((p) => ('text' in p ? p.text : '')).join('');

describe('perResultCapChars (reference §11)', () => {
  it.each([
    [8_000, 9_600],
    [50_000, 16_000],
    [128_000, 32_000],
    [200_000, 64_000],
    [1_000, 2_000],
  ])('%i-token window → %i chars', (ctx, cap) => expect(perResultCapChars(ctx)).toBe(cap));
});

describe('truncateText', () => {
  it('keeps the head with a notice when the tail is unremarkable', () => {
    const out = truncateText('a'.repeat(10_000), 3_000);
    expect(out).toBe(`${'a'.repeat(3_000)}\n[... 7000 more characters truncated; rerun with narrower args if needed]`);
  });
  it('keeps head and tail when the tail looks important', () => {
    const out = truncateText(`${'a'.repeat(10_000)}\nERROR: build failed`, 3_000);
    expect(out.startsWith('a'.repeat(2_100))).toBe(true);
    expect(out).toContain('⚠️ [... middle content omitted — showing head and tail ...]');
    expect(out.endsWith('ERROR: build failed')).toBe(true);
  });
  it('leaves short text alone', () => expect(truncateText('short', 3_000)).toBe('short'));
});

describe('capToolResult', () => {
  it('shares the budget between text parts in proportion to their size', () => {
    const capped = capToolResult([{ type: 'text', text: 'x'.repeat(30_000) }, { type: 'text', text: 'y'.repeat(10_000) }], 20_000);
    const lengths = capped.map((p) => ('text' in p ? p.text.length : 0));
    expect(lengths[0]).toBeGreaterThan(lengths[1]!);
    expect(lengths[0]! + lengths[1]!).toBeLessThan(20_400);
  });
});

describe('pruneToolResults', () => {
  const big = 'r'.repeat(6_000);
  // Four rounds; the first result is older than the last three assistant turns.
  const convo: Message[] = [user('q'), assistant('', 'c1'), result('c1', big), assistant('', 'c2'), result('c2', big), assistant('', 'c3'), result('c3', big), assistant('done')];

  it('changes nothing below 30% of the budget', () => {
    expect(pruneToolResults(convo, 2_900, 10_000)).toEqual(convo);
  });
  it('from 30%, trims old results over 4,000 chars to their first and last 1,500, keeping the last three assistant turns', () => {
    const pruned = pruneToolResults(convo, 3_000, 10_000);
    expect(textOf(pruned[2]!)).toBe(`${'r'.repeat(1_500)}\n[... 3000 characters of an older tool result pruned ...]\n${'r'.repeat(1_500)}`);
    expect(pruned.slice(3)).toEqual(convo.slice(3));
  });
  it('from 50% with at least 50,000 prunable chars, clears old results', () => {
    const huge = [user('q'), assistant('', 'c0'), result('c0', 'z'.repeat(60_000)), ...convo.slice(1)];
    const pruned = pruneToolResults(huge, 6_000, 10_000);
    expect(textOf(pruned[2]!)).toBe(CLEARED_TOOL_RESULT);
    expect(textOf(pruned[4]!)).toBe(CLEARED_TOOL_RESULT);
    expect(pruned.at(-2)).toEqual(huge.at(-2));
  });
});

describe('chooseCut', () => {
  const entries = (messages: Message[]): TranscriptEntry[] => messages.map((message, i) => ({ seq: i + 1, message, kind: 'message', createdAt: 0 }));
  it('keeps the newest entries that fit and never starts the kept part with a tool result', () => {
    const list = entries([user('a'.repeat(400)), assistant('b'.repeat(400), 'c1'), result('c1', 'c'.repeat(400)), assistant('d'), user('e')]);
    const cut = chooseCut(list, 110);
    expect(cut).toBe(3);
    expect(list[cut]!.message.role).not.toBe('toolResult');
  });
  it('folds at least the oldest entry and keeps at least the newest', () => {
    const list = entries([user('x'), user('y')]);
    expect(chooseCut(list, 1_000_000)).toBe(1);
    expect(chooseCut(list, 0)).toBe(1);
    expect(chooseCut(entries([user('only')]), 0)).toBe(0);
  });
  it('keeps an unbroken tool exchange whole by cutting before it', () => {
    const list = entries([user('q'), assistant('', 'c1'), result('c1', 'r'), result('c1', 'r')]);
    expect(chooseCut(list, 0)).toBe(1);
  });
});
