import { describe, expect, it } from 'vitest';
import { saysContextOverflow } from './context-overflow.js';

const FORMER = /context|too long|too many tokens|maximum.*tokens|exceeds.*tokens/i;

describe('saysContextOverflow', () => {
  it.each([
    ["This model's maximum context length is 128000 tokens", true],
    ['prompt is too long: 210000 tokens > 200000 maximum', true],
    ['Too many tokens in the request', true],
    ['input exceeds the limit of 1048576 tokens', true],
    ['Maximum allowed is 4096 TOKENS', true],
    ['maximum\ntokens', false],
    ['exceeds\rtokens', false],
    ['maximum\u2028tokens', false],
    ['maximumtokens', true],
    ['tokens over the maximum', false],
    ['exceeds the rate limit', false],
    ['invalid tool schema', false],
    ['', false],
    ['maximum tokens\nmaximum', true],
    ['exceedstokens', true],
  ])('%j → %s, as the former pattern reads it', (message, expected) => {
    expect(saysContextOverflow(message)).toBe(expected);
    expect(FORMER.test(message)).toBe(expected);
  });

  it('returns at once on a message of 100,000 "maximum" and no tokens', () => {
    expect(saysContextOverflow('maximum '.repeat(100_000))).toBe(false);
    expect(saysContextOverflow('exceeds'.repeat(100_000))).toBe(false);
  });
});
