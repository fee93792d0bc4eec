import { describe, expect, it } from 'vitest';
import { jsonSize, toolsJsonSize } from './json-size.js';

const measured = (value: unknown) => {
  const text = JSON.stringify(value);
  return { chars: text.length, bytes: Buffer.byteLength(text) };
};

describe('jsonSize', () => {
  it.each([
    ['an empty object', {}],
    ['nested schema', { type: 'object', properties: { path: { type: 'string', description: 'a file' } }, required: ['path'] }],
    ['non-ASCII text (bytes differ from characters)', { description: 'größe — 日本語 🙂' }],
    ['an array', [1, 'two', { three: 3 }]],
  ])('equals JSON.stringify for %s', (_name, value) => {
    expect(jsonSize(value)).toEqual(measured(value));
    // The second answer comes from the memo and is the same.
    expect(jsonSize(value)).toEqual(measured(value));
  });
});

describe('toolsJsonSize', () => {
  const schema = { type: 'object', properties: { q: { type: 'string', description: 'query — ü' } } };
  it.each([
    ['no tools', []],
    ['one tool', [{ name: 'read', description: 'Reads a file', parameters: schema }]],
    ['several, with a projected id and non-ASCII', [
      { id: 'web_search', name: 'web_search', description: 'Sucht im Netz — schnell', parameters: schema },
      { id: 'exec', name: 'exec', description: 'Runs "a command"\n', parameters: { type: 'object', properties: {}, required: [], additionalProperties: false } },
    ]],
    ['a tool with only parameters', [{ parameters: schema }]],
    ['a tool without parameters', [{ name: 'x', description: 'y' } as { name: string; description: string; parameters?: object }]],
    ['fields JSON leaves out or writes otherwise', [
      { name: 'x', skipped: undefined, run: () => 1, n: 3, flag: true, none: null, list: ['a', 'ü'], parameters: schema } as unknown as { parameters?: object },
      { name: 'key "quoted" — ü', 'é"\\': 'escaped \\ "and" \u0001', parameters: schema } as unknown as { parameters?: object },
      { skipped: undefined } as unknown as { parameters?: object },
    ]],
  ])('equals measuring JSON.stringify(tools) for %s', (_name, tools) => {
    expect(toolsJsonSize(tools)).toEqual(measured(tools));
  });
});

describe('toolsJsonSize, measured again', () => {
  it('for tool objects made afresh from the same strings (as a request builds them)', () => {
    const description = 'Reads a file — größer';
    for (let i = 0; i < 3; i++) {
      const tools = [{ name: 'read', description, parameters: schema }, { name: 'write', description: `${description}!`, parameters: schema }];
      expect(toolsJsonSize(tools)).toEqual(measured(tools));
    }
  });
  const schema = { type: 'object', properties: {} };
  it('when a tool object measured before holds other fields now', () => {
    const tool: { name: string; description: string; parameters: object; id?: string } = { name: 'read', description: 'Reads', parameters: schema };
    expect(toolsJsonSize([tool])).toEqual(measured([tool]));
    tool.description = 'Reads a file — größer';
    expect(toolsJsonSize([tool])).toEqual(measured([tool]));
    tool.id = 'read';
    expect(toolsJsonSize([tool])).toEqual(measured([tool]));
    delete tool.id;
    expect(toolsJsonSize([tool])).toEqual(measured([tool]));
  });
  it('when a field is an object (changed in place, not replaced)', () => {
    const meta = { tag: 'a' };
    const tool = { name: 'x', meta, parameters: schema };
    expect(toolsJsonSize([tool])).toEqual(measured([tool]));
    meta.tag = 'a much longer tag than before';
    expect(toolsJsonSize([tool])).toEqual(measured([tool]));
  });
});
