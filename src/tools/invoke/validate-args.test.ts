import { describe, expect, it } from 'vitest';
import { formatArgumentProblems, validateArgs } from './validate-args.js';

const EXEC = {
  type: 'object',
  properties: {
    command: { type: 'string', minLength: 1 },
    timeout: { type: 'integer', minimum: 1, maximum: 3600 },
    background: { type: 'boolean' },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    mode: { enum: ['pty', 'pipe'] },
    args: { type: 'array', items: { type: 'string', maxLength: 5 }, maxItems: 3 },
  },
  required: ['command'],
  additionalProperties: false,
};

describe('validateArgs', () => {
  it.each([
    ['valid', { command: 'ls', timeout: 5, env: { A: 'b' }, mode: 'pty', args: ['-l'] }, ''],
    ['missing required field', {}, 'command: required'],
    ['wrong type', { command: 'ls', timeout: '5' }, 'timeout: expected integer, got string'],
    ['a float for an integer', { command: 'ls', timeout: 1.5 }, 'timeout: expected integer, got number'],
    ['below minimum', { command: 'ls', timeout: 0 }, 'timeout: must be ≥ 1'],
    ['above maximum', { command: 'ls', timeout: 4000 }, 'timeout: must be ≤ 3600'],
    ['empty string', { command: '' }, 'command: must be at least 1 characters'],
    ['unknown field', { command: 'ls', cwd: '/' }, 'cwd: unknown field'],
    ['enum', { command: 'ls', mode: 'tty' }, 'mode: must be one of "pty", "pipe"'],
    ['additionalProperties schema', { command: 'ls', env: { A: 1 } }, 'env.A: expected string, got integer'],
    ['array items', { command: 'ls', args: ['ok', 'toolong'] }, 'args[1]: must be at most 5 characters'],
    ['array length', { command: 'ls', args: ['a', 'b', 'c', 'd'] }, 'args: must have at most 3 items'],
    ['not an object', 'ls', '(arguments): expected object, got string'],
    ['nothing at all', undefined, '(arguments): expected object, got nothing'],
    ['several problems at once', { timeout: 'x', cwd: 1 }, 'command: required; timeout: expected integer, got string; cwd: unknown field'],
  ])('%s', (_label, args, expected) => {
    expect(formatArgumentProblems(validateArgs(EXEC, args))).toBe(expected);
  });

  const UNION = {
    type: 'object',
    properties: {
      target: {
        oneOf: [
          { type: 'object', properties: { url: { type: 'string', pattern: '^https?://' } }, required: ['url'], additionalProperties: false },
          { type: 'object', properties: { ref: { type: 'string' } }, required: ['ref'], additionalProperties: false },
        ],
      },
      size: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', enum: ['auto'] }] },
    },
  };

  it.each([
    ['first oneOf variant', { target: { url: 'https://x' } }, ''],
    ['second oneOf variant', { target: { ref: 'e1' } }, ''],
    ['closest variant explains', { target: { url: 'ftp://x' } }, 'target.url: must match ^https?://'],
    ['no variant fits', { target: 5 }, 'target: does not match any oneOf variant'],
    ['anyOf integer', { size: 3 }, ''],
    ['anyOf string', { size: 'auto' }, ''],
    ['anyOf neither', { size: 'big' }, 'size: must be one of "auto"'],
  ])('%s', (_label, args, expected) => {
    expect(formatArgumentProblems(validateArgs(UNION, args))).toBe(expected);
  });

  it('reports a value matching two oneOf variants', () => {
    const schema = { oneOf: [{ type: 'integer' }, { type: 'number' }] };
    expect(formatArgumentProblems(validateArgs(schema, 3))).toBe('(arguments): matches 2 of the oneOf variants; it must match exactly one');
  });

  it('accepts type lists and const', () => {
    expect(validateArgs({ type: ['string', 'null'] }, null)).toEqual([]);
    expect(formatArgumentProblems(validateArgs({ const: 'x' }, 'y'))).toBe('(arguments): must be "x"');
  });
});
