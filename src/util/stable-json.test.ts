import { describe, expect, it } from 'vitest';
import { stableJson } from './stable-json.js';

describe('stableJson', () => {
  it('gives the same text for objects that differ only in key order, at any depth', () => {
    expect(stableJson({ b: 1, a: { d: [{ y: 1, x: 2 }], c: 3 } })).toBe(stableJson({ a: { c: 3, d: [{ x: 2, y: 1 }] }, b: 1 }));
    expect(stableJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });

  it('keeps array order and handles undefined', () => {
    expect(stableJson([2, 1])).toBe('[2,1]');
    expect(stableJson(undefined)).toBe('undefined');
  });
});
