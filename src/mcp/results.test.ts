import { describe, expect, it } from 'vitest';
import { contentBlock, mapCallResult, MAX_IMAGE_CHARS } from './results.js';

describe('an MCP call result as a tool result', () => {
  it.each<[string, unknown, unknown]>([
    ['text', { type: 'text', text: 'hi' }, { type: 'text', text: 'hi' }],
    ['image', { type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }],
    ['an image with a mime type that is not one', { type: 'image', data: 'AAAA', mimeType: 'text/html' }, { type: 'text', text: '[image text/html]' }],
    ['a too-large image', { type: 'image', data: 'A'.repeat(MAX_IMAGE_CHARS + 1), mimeType: 'image/png' }, { type: 'text', text: `[image image/png, ${MAX_IMAGE_CHARS + 1} base64 characters: too large to show]` }],
    ['audio', { type: 'audio', data: 'x', mimeType: 'audio/wav' }, { type: 'text', text: '[audio audio/wav]' }],
    ['a resource link', { type: 'resource_link', uri: 'https://x/y', name: 'Y' }, { type: 'text', text: '[Y] https://x/y' }],
    ['an embedded text resource', { type: 'resource', resource: { uri: 'file:///a', text: 'body' } }, { type: 'text', text: 'body' }],
    ['an embedded image resource', { type: 'resource', resource: { uri: 'file:///a.png', blob: 'AAAA', mimeType: 'image/png' } }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }],
    ['an embedded binary resource', { type: 'resource', resource: { uri: 'file:///a.bin', blob: 'AAAA', mimeType: 'application/zip' } }, { type: 'text', text: '[resource file:///a.bin (application/zip, 3 bytes)]' }],
    ['an unknown block', { type: 'hologram', x: 1 }, { type: 'text', text: '{\n  "type": "hologram",\n  "x": 1\n}' }],
  ])('%s', (_what, block, expected) => {
    expect(contentBlock(block)).toEqual(expected);
  });

  it('isError makes an error result; an empty one still says something', () => {
    expect(mapCallResult({ isError: true, content: [] }, { server: 's', tool: 't' })).toEqual({
      content: [{ type: 'text', text: 'MCP tool failed without returning content.' }],
      details: { mcpServer: 's', mcpTool: 't', status: 'error' },
      isError: true,
    });
  });
});
