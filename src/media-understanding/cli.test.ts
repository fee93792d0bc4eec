import { describe, expect, it } from 'vitest';
import { withoutExitTrailer } from './cli.js';

const FORMER = /\n\n\((exit code -?\d+|killed: timeout|signal [\w-]+|could not start: [^)]*)\)$/;

describe('withoutExitTrailer', () => {
  it.each([
    'hello\n\n(exit code 1)',
    'hello\n\n(exit code -2)',
    'hello\n\n(killed: timeout)',
    'hello\n\n(signal SIGKILL)',
    'hello\n\n(could not start: ENOENT)',
    'hello\n\n(could not start: a\n\n(exit code 1)',
    'a (b)\n\n(exit code 0)',
    'hello (exit code 1)',
    'hello\n\n(exit code 1) and more',
    'hello\n\n(exit code x)',
    'hello\n\n(exit code 1)\n\n(exit code 2)',
    '\n\n(signal )',
    '\n\n(exit code 1)',
    '(no output)\n\n(exit code 0)',
    ')',
    '',
  ])('%j as the former pattern cuts it', (text) => {
    expect(withoutExitTrailer(text)).toBe(text.replace(FORMER, ''));
  });

  it.each([
    ['100,000 trailers that never close', '\n\n(could not start: '.repeat(100_000)],
    ['100,000 openings before a closing one', `${'\n\n(exit code 1'.repeat(100_000)})`],
    ['100,000 signals before a closing one', `${'\n\n(signal x'.repeat(100_000)}.)`],
  ])('returns at once on %s', (_what, hostile) => {
    expect(typeof withoutExitTrailer(hostile)).toBe('string');
  });
});
