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
  ])('equals measuring JSON.stringify(tools) for %s', (_name, tools) => {
    expect(toolsJsonSize(tools)).toEqual(measured(tools));
  });
});
