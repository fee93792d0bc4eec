import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { lazySchema, once } from './lazy.js';
import { execConfig } from './exec.js';
import { agentsConfig, toolsConfig, wardenConfigSchema } from './index.js';

/** Whether a lazy schema has been built (zod keeps the built schema on the lazy's definition). */
const built = (schema: z.ZodLazy<z.ZodType>): boolean => (schema._zod.def as { _cachedInner?: unknown })._cachedInner !== undefined;

describe('config sections are built on first use', () => {
  // First in the file: nothing in it has parsed a tools or agents block yet.
  it('a config without a section does not build it', () => {
    expect(wardenConfigSchema.safeParse({}).success).toBe(true);
    expect(built(toolsConfig)).toBe(false);
    expect(built(agentsConfig)).toBe(false);
    expect(built(execConfig)).toBe(false);
  });

  it('a config with a section builds it, and what it reaches', () => {
    expect(wardenConfigSchema.safeParse({ tools: { exec: {} } }).success).toBe(true);
    expect(built(toolsConfig)).toBe(true);
    expect(built(execConfig)).toBe(true);
    expect(built(agentsConfig)).toBe(false);
  });

  const cases: Array<{ name: string; field: (s: z.ZodType) => z.ZodType; input: unknown }> = [
    { name: 'absent, optional', field: (s) => s.optional(), input: {} },
    { name: 'absent, defaulted', field: (s) => s.default({ n: 1 }), input: {} },
    { name: 'present, invalid', field: (s) => s.optional(), input: { a: { n: 'x', extra: 1 } } },
    { name: 'present, valid', field: (s) => s.default({ n: 1 }), input: { a: { n: 2 } } },
    { name: 'absent, prefaulted', field: (s) => s.prefault({}), input: {} },
  ];
  it.each(cases)('$name: the same result and issues as the eager schema', ({ field, input }) => {
    const make = () => z.strictObject({ n: z.number().int().default(1) });
    let builds = 0;
    const lazy = lazySchema(() => (builds++, make()));
    const eager = z.strictObject({ a: field(make()) });
    const deferred = z.strictObject({ a: field(lazy) });
    expect(JSON.stringify(deferred.safeParse(input))).toBe(JSON.stringify(eager.safeParse(input)));
    expect(JSON.stringify(z.toJSONSchema(deferred, { io: 'input' }))).toBe(JSON.stringify(z.toJSONSchema(eager, { io: 'input' })));
    expect(builds).toBe(1);
  });

  it('builds once however often it is used', () => {
    let builds = 0;
    const lazy = lazySchema(() => (builds++, z.string()));
    for (let i = 0; i < 3; i++) lazy.parse('x');
    expect(builds).toBe(1);
  });

  it('refuses to wrap a schema that is itself optional or defaulted (absent keys would parse differently)', () => {
    expect(() => lazySchema(() => z.string().optional()).parse('x')).toThrow(/optional or defaulted/);
    expect(() => lazySchema(() => z.string().default('y')).parse('x')).toThrow(/optional or defaulted/);
  });

  it('a shared piece (once) is built at its first use, once, and is the same object for every section', () => {
    let builds = 0;
    const piece = once(() => (builds++, z.string().min(1)));
    expect(builds).toBe(0);
    const a = z.strictObject({ x: piece().optional() });
    const b = z.strictObject({ y: piece() });
    expect(builds).toBe(1);
    expect(piece()).toBe(piece());
    expect(a.safeParse({ x: '' }).success).toBe(false);
    expect(b.safeParse({ y: 'v' }).success).toBe(true);
  });

  it('the whole config schema: the same defaults from an empty file and the same JSON schema, built lazily or not', () => {
    // Every section built (toJSONSchema walks them all) and then parsed again: the result of `{}` does not change.
    const before = JSON.stringify(wardenConfigSchema.safeParse({}));
    const json = JSON.stringify(z.toJSONSchema(wardenConfigSchema, { io: 'input', unrepresentable: 'any' }));
    expect(JSON.stringify(wardenConfigSchema.safeParse({}))).toBe(before);
    expect(JSON.stringify(z.toJSONSchema(wardenConfigSchema, { io: 'input', unrepresentable: 'any' }))).toBe(json);
  });
});
