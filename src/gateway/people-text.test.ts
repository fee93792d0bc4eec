import { describe, expect, it } from 'vitest';
import { wrapUntrusted } from '../tools/untrusted.js';
import { forPeople } from './people-text.js';

describe('forPeople: what a tool tells the model, as people read it', () => {
  it.each([
    ['exec denied by the approver. Do not retry this command.', 'exec denied by the approver.'],
    ['exec denied: approval-timeout: allowlist-miss. Do not retry this command.', 'exec denied: approval-timeout: allowlist-miss.'],
    ['elevated exec not run: the approval was denied. Do not retry this command.', 'elevated exec not run: the approval was denied.'],
    ['Session 7 was started by another sender in this conversation; only that sender or an owner can use it. Do not retry.', 'Session 7 was started by another sender in this conversation; only that sender or an owner can use it.'],
    ['plain output\nsecond line', 'plain output\nsecond line'],
    ['retry counts: 3 (we do not retry forever)', 'retry counts: 3 (we do not retry forever)'],
  ])('%j', (input, expected) => {
    expect(forPeople(input)).toBe(expected);
  });

  it('takes the untrusted wrapper off, keeping what it wrapped', () => {
    expect(forPeople(wrapUntrusted('tool:exec', 'hello\nworld'))).toBe('hello\nworld');
  });
});

/** forPeople as it was written with the plain patterns, to hold the linear forms to the same results. */
function formerForPeople(text: string): string {
  let out = text.replace(/^[ \t]*<\/?untrusted-[0-9a-f]{32}(?:\s+source="[^"\n]*")?>[ \t]*(?:\r?\n|$)/gim, '');
  for (const directive of [
    /\s*\bDo not retry(?: this command| this call| it| the same call)?(?: unless (?:they|the user) asks?)?\s*[.!]/gi,
    /\s*\bDo not run the call again\./gi,
    /\s*\bDo not poll (?:for it|it)[^.]*\./gi,
  ]) {
    out = out.replace(directive, '');
  }
  return out.replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trimEnd();
}

describe('forPeople reads as the plain patterns did', () => {
  it.each([
    'started in the background. Do not poll for it; you will be told when it ends. Done.',
    'queued.  Do not poll it until the job ends.\nnext line',
    'Do not poll it',
    'Do not poll it. Do not poll for it.',
    'waiting.\tDo not poll for it, it will report. Do not poll it',
    'x Do not poll it y. Do not retry this command! trailing   \nline  \t\n\n\n\nend',
    '(Do not retry.) kept',
    'do NOT RUN THE CALL AGAIN. case does not matter',
    'aDo not retry. no word boundary',
    'spaces   \n   \n',
    '',
  ])('%j', (text) => {
    expect(forPeople(text)).toBe(formerForPeople(text));
  });

  it.each([
    ['100,000 spaces before a letter', `${' '.repeat(100_000)}x`],
    ['100,000 tabs ending a line', `a${'\t'.repeat(100_000)}b\n`],
    ['10,000 poll directives and no full stop', 'Do not poll it '.repeat(10_000)],
  ])('returns at once on %s', (_what, hostile) => {
    expect(typeof forPeople(hostile)).toBe('string');
  });
});
