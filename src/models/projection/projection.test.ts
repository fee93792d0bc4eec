import { describe, expect, it } from 'vitest';
import { projectSchema, projectTools, type ProjectionTarget } from './index.js';
import { wireName } from './names.js';

const anthropic: ProjectionTarget = { api: 'anthropic', provider: 'anthropic', model: 'claude-sonnet-4-5' };
const openai: ProjectionTarget = { api: 'openai', provider: 'openai', model: 'gpt-5-mini' };
const gemini: ProjectionTarget = { api: 'gemini', provider: 'gemini', model: 'gemini-2.5-flash' };
const xai: ProjectionTarget = { api: 'openai', provider: 'xai', model: 'grok-4' };
const lmstudio: ProjectionTarget = { api: 'openai', provider: 'lmstudio', model: 'qwen3' };
const geminiViaOpenAI: ProjectionTarget = { api: 'openai', provider: 'openrouter', model: 'google/gemini-2.5-pro' };

const project = (schema: Record<string, unknown>, target: ProjectionTarget) => {
  const r = projectSchema(schema, target);
  return r.ok ? r.schema : { error: r.reason };
};

const withRefs = {
  type: 'object',
  $defs: { Path: { type: 'string', description: 'a path' }, Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } },
  properties: { path: { $ref: '#/$defs/Path' }, tree: { $ref: '#/$defs/Node' } },
  required: ['path'],
};

const union = {
  anyOf: [
    { type: 'object', properties: { action: { const: 'list' }, limit: { type: 'integer' } }, required: ['action'] },
    { type: 'object', properties: { action: { const: 'kill' }, id: { type: 'string' } }, required: ['action', 'id'] },
  ],
};

const validation = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 10, pattern: '^[a-z]+$', format: 'hostname' },
    count: { type: ['integer', 'null'], minimum: 0, maximum: 9 },
    tags: { type: 'array', minItems: 1, uniqueItems: true, minContains: 1 },
    mode: { enum: [1, 2, 2, true] },
    meta: { type: 'object', additionalProperties: { type: 'string' } },
  },
  required: ['name', 'ghost'],
  additionalProperties: false,
};

describe('projection table', () => {
  it.each([
    // $ref inlining: local refs inlined, recursive ref → {}, $defs dropped
    [
      'refs',
      withRefs,
      anthropic,
      {
        type: 'object',
        properties: { path: { type: 'string', description: 'a path' }, tree: { type: 'object', properties: { next: {} } } },
        required: ['path'],
      },
    ],
    // union flattening: properties merged, const values unioned into an enum, required intersected
    [
      'union',
      union,
      openai,
      {
        type: 'object',
        properties: { action: { type: 'string', enum: ['list', 'kill'] }, limit: { type: 'integer' }, id: { type: 'string' } },
        required: ['action'],
        additionalProperties: true,
      },
    ],
    // Anthropic keeps validation keywords as they are
    ['validation kept', validation, anthropic, { ...validation, properties: { ...validation.properties, tags: { ...validation.properties.tags, items: {} } } }],
    // Gemini: validation keywords removed, enums stringified, type arrays lose null, required filtered
    [
      'gemini cleaning',
      validation,
      gemini,
      {
        type: 'object',
        properties: {
          name: { type: 'string' },
          count: { type: 'integer' },
          tags: { type: 'array', minContains: 1, items: {} },
          mode: { type: 'string', enum: ['1', '2', 'true'] },
          meta: { type: 'object' },
        },
        required: ['name'],
      },
    ],
    // Gemini models served through an OpenAI-compatible gateway get the Gemini cleaning too
    ['gemini via gateway', { type: 'object', properties: { n: { type: 'number', minimum: 1 } } }, geminiViaOpenAI, { type: 'object', properties: { n: { type: 'number' } } }],
    // per-model keywords: xAI drops minContains/maxContains, LM Studio also pattern
    [
      'xai keywords',
      { type: 'object', properties: { a: { type: 'array', items: {}, minContains: 1, maxContains: 2 }, s: { type: 'string', pattern: 'x' } } },
      xai,
      { type: 'object', properties: { a: { type: 'array', items: {} }, s: { type: 'string', pattern: 'x' } } },
    ],
    [
      'lmstudio keywords',
      { type: 'object', properties: { pattern: { type: 'string', pattern: 'x' } } },
      lmstudio,
      // a property *named* pattern is data, not a keyword
      { type: 'object', properties: { pattern: { type: 'string' } } },
    ],
    // empty schema → empty object; OpenAI gets the strict-compat shape
    ['empty (anthropic)', {}, anthropic, { type: 'object', properties: {} }],
    ['empty (openai)', {}, openai, { type: 'object', properties: {}, required: [], additionalProperties: false }],
    // properties without type gets type object
    ['no type', { properties: { a: { type: 'string' } } }, anthropic, { type: 'object', properties: { a: { type: 'string' } } }],
    // OpenAPI nullable → JSON-schema null; annotations removed
    [
      'nullable',
      { type: 'object', properties: { a: { type: 'string', nullable: true, example: 'x' }, b: { enum: ['x'], nullable: true }, c: { anyOf: [{ type: 'string' }], nullable: true } } },
      anthropic,
      {
        type: 'object',
        properties: { a: { type: ['string', 'null'] }, b: { enum: ['x', null] }, c: { anyOf: [{ anyOf: [{ type: 'string' }] }, { type: 'null' }] } },
      },
    ],
    // Gemini: null variants stripped from unions, literal unions collapse, mixed unions take the first
    [
      'gemini unions',
      {
        type: 'object',
        properties: {
          a: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          b: { oneOf: [{ const: 'x' }, { const: 'y' }] },
          c: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          d: { anyOf: [{ type: 'string', description: 'one' }, { type: 'string' }] },
        },
      },
      gemini,
      {
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'string', enum: ['x', 'y'] }, c: { type: 'string' }, d: { type: 'string' } },
      },
    ],
  ])('%s', (_name, input, target, expected) => {
    expect(project(input as Record<string, unknown>, target)).toEqual(expected);
  });

  it.each([
    ['a string at the top', { type: 'string' }, anthropic, /must describe an object/],
    ['a union without objects', { anyOf: [{ type: 'string' }, { type: 'number' }] }, openai, /no object variant/],
    ['an external $ref for Gemini', { type: 'object', properties: { a: { $ref: 'https://x/schema.json' } } }, gemini, /unresolvable \$ref/],
  ])('cannot project %s', (_name, input, target, reason) => {
    const r = projectSchema(input, target);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
  });
});

describe('tool names per provider', () => {
  it.each([
    ['web_fetch', 'anthropic', 'web_fetch'],
    ['github.create-issue', 'anthropic', 'github_create-issue'],
    ['github.create-issue', 'gemini', 'github.create-issue'],
    ['9lives', 'gemini', '_9lives'],
    ['9lives', 'openai', '9lives'],
    ['a'.repeat(100), 'openai', 'a'.repeat(64)],
    ['a'.repeat(100), 'anthropic', 'a'.repeat(100)],
    ['mcp server/tool', 'openai', 'mcp_server_tool'],
  ] as const)('%s on %s → %s', (id, api, expected) => {
    expect(wireName(id, api)).toBe(expected);
  });
});

describe('projectTools', () => {
  it('leaves out tools that cannot be projected or collide, with diagnostics, and maps names back', () => {
    const cyclic: Record<string, unknown> = { type: 'object', properties: {} };
    (cyclic.properties as Record<string, unknown>).self = cyclic;
    const result = projectTools(
      [
        { id: 'read', description: 'r', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
        { id: 'bad', description: 'b', parameters: { type: 'array' } },
        { id: 'loop', description: 'l', parameters: cyclic },
        { id: 'a.b', description: 'x', parameters: {} },
        { id: 'a_b', description: 'y', parameters: {} },
      ],
      openai,
    );
    expect(result.tools.map((t) => t.name)).toEqual(['read', 'a_b']);
    expect(result.idByWireName.get('a_b')).toBe('a.b');
    expect(result.diagnostics).toEqual([
      { tool: 'bad', kind: 'omitted', message: 'not sent to openai/gpt-5-mini: top-level schema must describe an object, not "array"' },
      { tool: 'loop', kind: 'omitted', message: expect.stringMatching(/schema is not JSON/) },
      { tool: 'a.b', kind: 'renamed', message: 'sent to openai as "a_b"' },
      { tool: 'a_b', kind: 'omitted', message: 'not sent: its openai name "a_b" is already used by "a.b"' },
    ]);
  });

  it('returns the same projected schema object on repeated turns (memoised)', () => {
    const params = { type: 'object', properties: { q: { type: 'string' } } };
    const a = projectTools([{ id: 'q', description: '', parameters: params }], gemini);
    const b = projectTools([{ id: 'q', description: '', parameters: params }], gemini);
    expect(a.tools[0]?.parameters).toBe(b.tools[0]?.parameters);
  });
});
