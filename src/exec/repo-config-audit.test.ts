import { describe, expect, it } from 'vitest';
import { beforeWildcard } from './repo-config-audit.js';

describe('beforeWildcard', () => {
  it.each(['/opt/tools/*.sh', '/opt/tools/run?', '/opt/tools/run', 'a*b*c', '*', '', 'a\n*b', 'a*\nb', 'a*\nb*c', 'a?\u2028b?', '\r*'])(
    '%j as /[*?].*$/ cuts it',
    (pattern) => {
      expect(beforeWildcard(pattern)).toBe(pattern.replace(/[*?].*$/, ''));
    },
  );

  it('returns at once on 100,000 `*` before a line break', () => {
    const hostile = `${'*'.repeat(100_000)}\n`;
    expect(beforeWildcard(hostile)).toBe(hostile);
  });
});
