import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic } from '../../../../test/fakes/models/anthropic-fake.js';
import type { FakeModelServer } from '../../../../test/fakes/models/server.js';
import { parseConfig } from '../../../config/index.js';
import { log } from '../../../log/log.js';
import { createModelRegistry } from '../../../models/registry.js';
import type { TurnContext } from '../../../policy/context.js';
import type { ToolResult } from '../../types.js';
import { createImageTool } from './image.js';
import { withoutNonces } from '../../untrusted-testing.js';

// A 1×1 transparent PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

let ws: string;
let server: FakeModelServer | undefined;
beforeAll(() => {
  ws = mkdtempSync(path.join(tmpdir(), 'warden-image-'));
  writeFileSync(path.join(ws, 'chart.png'), PNG);
  writeFileSync(path.join(ws, 'notes.txt'), 'not an image');
});
afterAll(() => rmSync(ws, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'dm', senderIsOwner: true, spawnDepth: 0, model: 'anthropic/vision-1' };
const ctx = () => ({
  toolCallId: 't',
  signal: new AbortController().signal,
  turn,
  sessionKey: 's',
  workspaceDir: ws,
  log,
  approvals: { request: async () => ({ id: '', outcome: 'cancelled' as const }) },
});
const textOf = (r: ToolResult) => r.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n');

async function toolFor(fake: FakeModelServer) {
  const parsed = parseConfig({ models: { default: 'anthropic/vision-1', providers: { anthropic: { baseUrl: fake.url } }, retry: { attempts: 2, baseDelayMs: 1 } } });
  if (!parsed.ok) throw parsed.error;
  return createImageTool({ config: parsed.value.config, models: createModelRegistry(parsed.value.config, { ANTHROPIC_API_KEY: 'k' }) });
}

describe('image', () => {
  it('sends the image to the session model with the prompt and returns its answer as untrusted', async () => {
    server = await startFakeAnthropic({ script: [{ kind: 'reply', text: 'A bar chart: sales up 12%.' }] });
    const r = (await (await toolFor(server)).execute({ path: 'chart.png', prompt: 'What does the chart show?' }, ctx())) as ToolResult;
    expect(withoutNonces(textOf(r))).toBe('<untrusted source="image:chart.png">\nA bar chart: sales up 12%.\n</untrusted>');
    const body = server.requests[0]!.body;
    expect(body.model).toBe('vision-1');
    expect(body.messages[0].content[0]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } });
    expect(body.messages[0].content[1]).toEqual({ type: 'text', text: 'What does the chart show?' });
  });

  it('refuses a file that is not an image, without calling the model', async () => {
    server = await startFakeAnthropic();
    const r = (await (await toolFor(server)).execute({ path: 'notes.txt' }, ctx())) as ToolResult;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('notes.txt is not a PNG, JPEG, GIF or WebP image');
    expect(server.requests).toHaveLength(0);
  });

  it('reports a model that keeps failing as an error result', async () => {
    server = await startFakeAnthropic({ respond: () => ({ kind: 'error', status: 500, message: 'vision down' }) });
    const r = (await (await toolFor(server)).execute({ path: 'chart.png' }, ctx())) as ToolResult;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^⚠️ The model anthropic\/vision-1 returned a server error \(HTTP 500\) after 2 tries: .*vision down/);
  });
});
