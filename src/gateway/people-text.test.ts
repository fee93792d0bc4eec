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
