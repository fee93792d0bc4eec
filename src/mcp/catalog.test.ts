import { describe, expect, it } from 'vitest';
import { buildCatalog, keptByFilter } from './catalog.js';
import { prepareInputSchema } from './schema.js';

describe('the tools a server lists, as Warden keeps them', () => {
  it.each<[string, string[] | undefined, string[] | undefined, boolean]>([
    ['list_issues', undefined, undefined, true],
    ['list_issues', ['list_*'], undefined, true],
    ['delete_repo', ['list_*'], undefined, false],
    ['list_issues', ['*'], ['list_issues'], false],
    ['list.issues', ['list_*'], undefined, false],
    ['list_issues', [], ['delete_*'], true],
  ])('%s with allow %j, deny %j → %s', (name, allow, deny, kept) => {
    expect(keptByFilter(name, allow, deny)).toBe(kept);
  });

  it('sorts, drops nameless and duplicate tools, bounds descriptions and cuts at maxTools, saying why', () => {
    const listed = [
      { name: 'b', description: 'x'.repeat(5000), inputSchema: { type: 'object' } },
      { name: 'a', description: 'A\u0007.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true, destructiveHint: 'yes' } },
      { name: 'a', description: 'again' },
      { description: 'no name' },
      { name: 'c' },
    ];
    const { tools, diagnostics } = buildCatalog(listed, { server: 'gh', maxTools: 2 });
    expect(tools.map((t) => t.name)).toEqual(['a', 'b']);
    expect(tools[0]).toMatchObject({ description: 'A.', annotations: { readOnlyHint: true } });
    expect(tools[1]!.description.length).toBe(2000);
    expect(diagnostics).toEqual([
      'MCP server gh lists tool a twice; the first is kept',
      'a tool of MCP server gh has no name; left out',
      'MCP server gh offers 3 tools; the first 2 by name are used (mcp.servers.gh.maxTools)',
    ]);
  });
});

describe('an input schema from a server', () => {
  it('is inlined ($ref) and stripped of pattern (the server checks its own regular expressions)', () => {
    const r = prepareInputSchema({ $schema: 'x', type: 'object', properties: { a: { $ref: '#/$defs/A' } }, $defs: { A: { type: 'string', pattern: '^(a+)+$' } } });
    expect(r).toEqual({ ok: true, schema: { type: 'object', properties: { a: { type: 'string' } } } });
  });

  it.each<[string, unknown, RegExp]>([
    ['not an object', [1], /not a JSON object/],
    ['too large', { type: 'object', description: 'x'.repeat(70_000) }, /bytes \(at most 65536\)/],
    ['too deep', { type: 'object', properties: { a: nest(60) } }, /nests deeper than 48/],
    ['a $ref fan-out bomb', refBomb(), /expands to more than 20000 nodes/],
  ])('%s is refused, with why', (_what, raw, why) => {
    const r = prepareInputSchema(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.why).toMatch(why);
  });

  it('absent is an empty object schema', () => {
    expect(prepareInputSchema(undefined)).toEqual({ ok: true, schema: { type: 'object', properties: {} } });
  });
});

function nest(n: number): unknown {
  let node: unknown = { type: 'string' };
  for (let i = 0; i < n; i++) node = { type: 'object', properties: { x: node } };
  return node;
}

/** 32 definitions, each using the previous twice: 2^32 nodes once inlined, from a few hundred bytes. */
function refBomb(): unknown {
  const defs: Record<string, unknown> = { d0: { type: 'string' } };
  for (let i = 1; i <= 32; i++) defs[`d${i}`] = { type: 'object', properties: { l: { $ref: `#/$defs/d${i - 1}` }, r: { $ref: `#/$defs/d${i - 1}` } } };
  return { type: 'object', properties: { top: { $ref: '#/$defs/d32' } }, $defs: defs };
}
