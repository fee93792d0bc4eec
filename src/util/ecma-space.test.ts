import { describe, expect, it } from 'vitest';
import { isEcmaSpace } from './ecma-space.js';

describe('isEcmaSpace', () => {
  it('agrees with the engine’s own \\s and trim() on every UTF-16 code unit', () => {
    const disagree: number[] = [];
    for (let code = 0; code < 0x10000; code++) {
      const c = String.fromCharCode(code);
      if (isEcmaSpace(code) !== /\s/.test(c) || isEcmaSpace(code) !== (c.trim() === '')) disagree.push(code);
    }
    expect(disagree).toEqual([]);
  });
});
