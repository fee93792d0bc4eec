import { describe, expect, it } from 'vitest';
import { normalizeToolList, normalizeToolName } from './tool-names.js';

describe('normalizeToolName (semantics §1: trimmed, lower-cased, aliases)', () => {
  it.each([
    ['exec', 'exec'],
    ['  Exec ', 'exec'],
    ['BASH', 'exec'],
    ['bash', 'exec'],
    ['apply-patch', 'apply_patch'],
    ['Apply-Patch', 'apply_patch'],
    ['apply_patch', 'apply_patch'],
    ['automations', 'cron'],
    ['update_plan', 'progress_card'],
    ['web_*', 'web_*'],
    ['Group:FS', 'group:fs'],
    ['', ''],
    ['   ', ''],
  ])('%j → %j', (input, expected) => {
    expect(normalizeToolName(input)).toBe(expected);
  });

  it('turns a non-string into "" so callers drop it', () => {
    expect(normalizeToolName(42)).toBe('');
    expect(normalizeToolName(undefined)).toBe('');
  });

  it('drops blanks and duplicates from a list, keeping order', () => {
    expect(normalizeToolList(['Bash', ' ', 'exec', 'read', 'READ'])).toEqual(['exec', 'read']);
  });
});
