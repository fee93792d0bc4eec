import type { ToolContent, ToolResult } from '../tools/types.js';

/**
 * A `tools/call` result as the model reads it (OpenClaw's projection, `mcp-content`): text and
 * images as they are; structured content first, as pretty JSON (a text block that only repeats
 * it is dropped); an embedded resource as its text, or as an image when it is one, else a line
 * naming it; a resource link, audio and anything unknown as one line of text. `isError` makes
 * an error result. The chain caps the text and the turn wraps it as untrusted data, like any
 * tool output. Pure.
 */

/** Base64 images larger than this are named, not sent (about 3.75 MB decoded). */
export const MAX_IMAGE_CHARS = 5_000_000;

type Block = Record<string, unknown>;
const isObject = (v: unknown): v is Block => typeof v === 'object' && v !== null && !Array.isArray(v);

function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function image(data: unknown, mimeType: unknown, label: string): ToolContent {
  if (typeof data !== 'string' || typeof mimeType !== 'string') return { type: 'text', text: `[${label}]` };
  if (!/^image\/[a-z0-9.+-]+$/i.test(mimeType)) return { type: 'text', text: `[${label} ${mimeType}]` };
  if (data.length > MAX_IMAGE_CHARS) return { type: 'text', text: `[${label} ${mimeType}, ${data.length} base64 characters: too large to show]` };
  return { type: 'image', data, mimeType };
}

export function contentBlock(block: unknown): ToolContent {
  if (!isObject(block)) return { type: 'text', text: json(block) };
  switch (block.type) {
    case 'text':
      if (typeof block.text === 'string') return { type: 'text', text: block.text };
      break;
    case 'image':
      return image(block.data, block.mimeType, 'image');
    case 'audio':
      return { type: 'text', text: `[audio${typeof block.mimeType === 'string' ? ` ${block.mimeType}` : ''}]` };
    case 'resource_link': {
      if (typeof block.uri !== 'string') break;
      const label = typeof block.title === 'string' ? block.title : typeof block.name === 'string' ? block.name : undefined;
      return { type: 'text', text: label ? `[${label}] ${block.uri}` : block.uri };
    }
    case 'resource': {
      const r = block.resource;
      if (!isObject(r) || typeof r.uri !== 'string') break;
      if (typeof r.text === 'string') return { type: 'text', text: r.text };
      const mime = typeof r.mimeType === 'string' ? r.mimeType : undefined;
      if (typeof r.blob === 'string' && mime?.startsWith('image/')) return image(r.blob, mime, `resource ${r.uri}`);
      const size = typeof r.blob === 'string' ? `, ${Math.floor((r.blob.length * 3) / 4)} bytes` : '';
      return { type: 'text', text: `[resource ${r.uri}${mime ? ` (${mime}${size})` : size ? ` (${size.slice(2)})` : ''}]` };
    }
  }
  return { type: 'text', text: json(block) };
}

export function mapCallResult(result: unknown, origin: { server: string; tool: string }): ToolResult {
  const r = isObject(result) ? result : {};
  const isError = r.isError === true;
  const blocks = Array.isArray(r.content) ? r.content : [];
  const content: ToolContent[] = [];
  if (isObject(r.structuredContent)) {
    const pretty = json(r.structuredContent);
    content.push({ type: 'text', text: `structuredContent:\n${pretty}` });
    const compact = JSON.stringify(r.structuredContent);
    for (const b of blocks) {
      if (isObject(b) && b.type === 'text' && typeof b.text === 'string' && (b.text === pretty || b.text === compact)) continue;
      content.push(contentBlock(b));
    }
  } else {
    for (const b of blocks) content.push(contentBlock(b));
  }
  if (content.length === 0) content.push({ type: 'text', text: isError ? 'MCP tool failed without returning content.' : 'MCP tool completed without returning content.' });
  const details: Record<string, unknown> = { mcpServer: origin.server, mcpTool: origin.tool };
  if (r.structuredContent !== undefined) details.structuredContent = r.structuredContent;
  if (isError) details.status = 'error';
  return { content, details, ...(isError ? { isError: true } : {}) };
}
