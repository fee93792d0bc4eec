import { mkdir, readdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_PNG, startFakeOpenAIMedia, type FakeMediaOptions } from '../../../../test/fakes/models/openai-media-fake.js';
import type { FakeModelServer } from '../../../../test/fakes/models/server.js';
import { parseConfig } from '../../../config/index.js';
import { callContext, makeTempWorkspace, textOf, type TempWorkspace } from '../fs/test-support.js';
import type { ToolResult } from '../../types.js';
import { createImageGenerateTool, imageRequest, type ImageGenerateArgs } from './image-generate.js';
import { openWardenStore } from '../../../app/migrations.js';
import { usageReport } from '../../../usage/report.js';
import { UsageService } from '../../../usage/service.js';
import { UsageStore } from '../../../usage/store.js';

let tmp: TempWorkspace;
let server: FakeModelServer | undefined;
beforeEach(async () => {
  tmp = await makeTempWorkspace();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await tmp.cleanup();
});

async function generate(args: ImageGenerateArgs, options: FakeMediaOptions & { model?: string } = {}): Promise<ToolResult> {
  server = await startFakeOpenAIMedia(options);
  const parsed = parseConfig({
    models: { providers: { openai: { baseUrl: server.url } }, retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 5 } },
    media: { imageGeneration: { model: options.model ?? 'openai/gpt-image-1', quality: 'low' } },
  });
  if (!parsed.ok) throw parsed.error;
  const tool = createImageGenerateTool(parsed.value.config, { OPENAI_API_KEY: 'sk-test' });
  return (await tool.execute(args, callContext(tmp.ws))) as ToolResult;
}

describe('image_generate', () => {
  it('asks the Images API, saves the image under generated/ and shows it to the model', async () => {
    const r = await generate({ prompt: 'a lighthouse at dusk' });
    expect(r.isError).toBeUndefined();
    const files = await readdir(path.join(tmp.ws, 'generated'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^image-\d{8}-\d{6}-[0-9a-f]{6}\.png$/);
    expect(await readFile(path.join(tmp.ws, 'generated', files[0]!))).toEqual(FAKE_PNG);
    expect(r.content[0]).toEqual({ type: 'text', text: `Generated an image with openai/gpt-image-1, saved as generated/${files[0]}.` });
    expect(r.content[1]).toEqual({ type: 'image', data: FAKE_PNG.toString('base64'), mimeType: 'image/png' });

    const request = server!.requests[0]!;
    expect(request.path).toBe('/v1/images/generations');
    expect(request.headers.authorization).toBe('Bearer sk-test');
    expect(request.body).toEqual({ model: 'gpt-image-1', prompt: 'a lighthouse at dusk', n: 1, size: '1024x1024', quality: 'low' });
  });

  it('saves every image of a multi-image call under its own name', async () => {
    const r = await generate({ prompt: 'three cats', count: 3, size: '1536x1024' });
    const files = await readdir(path.join(tmp.ws, 'generated'));
    expect(files).toHaveLength(3);
    expect(r.content.filter((c) => c.type === 'image')).toHaveLength(3);
    expect(server!.requests[0]!.body).toMatchObject({ n: 3, size: '1536x1024' });
    expect((r.details as { files: unknown[] }).files).toHaveLength(3);
  });

  it('asks other models for base64, never for a URL it would have to fetch', async () => {
    const r = await generate({ prompt: 'a fox' }, { model: 'openai/dall-e-3', imageAsUrl: true });
    expect(r.isError).toBeUndefined();
    expect(server!.requests[0]!.body.response_format).toBe('b64_json');
  });

  it('reports a provider that answers only URLs as an error', async () => {
    const r = await generate({ prompt: 'a fox' }, { imageAsUrl: true });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('openai/gpt-image-1 returned no image data');
  });

  it('refuses data that is not an image and writes nothing', async () => {
    const r = await generate({ prompt: 'a fox' }, { image: Buffer.from('<html>oops</html>') });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('openai/gpt-image-1 returned data that is not a PNG, JPEG, GIF or WebP image');
    await expect(readdir(path.join(tmp.ws, 'generated'))).rejects.toThrow(/ENOENT/);
  });

  const failures: Array<[string, FakeMediaOptions['script'], RegExp, number]> = [
    ['a rate limit that outlasts the retries', [{ kind: 'error', status: 429, message: 'Rate limit reached for images per minute' }, { kind: 'error', status: 429, message: 'Rate limit reached for images per minute' }], /^⚠️ The model openai\/gpt-image-1 is rate-limiting requests \(HTTP 429\) after 2 tries: .*Rate limit reached/, 2],
    ['a server error that outlasts the retries', [{ kind: 'error', status: 500, message: 'images backend down' }, { kind: 'error', status: 500, message: 'images backend down' }], /^⚠️ The model openai\/gpt-image-1 returned a server error \(HTTP 500\) after 2 tries: .*images backend down/, 2],
    ['an invalid prompt (not retried)', [{ kind: 'error', status: 400, message: 'Your request was rejected as a result of our safety system.' }], /^⚠️ The model openai\/gpt-image-1 rejected the request \(HTTP 400\): .*safety system/, 1],
  ];
  it.each(failures)('returns %s as an error result', async (_name, script, message, requests) => {
    const r = await generate({ prompt: 'something' }, { script });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(message);
    expect(server!.requests).toHaveLength(requests);
  });

  it('succeeds when a retry gets through after a 429', async () => {
    const r = await generate({ prompt: 'a boat' }, { script: [{ kind: 'error', status: 429, message: 'slow down' }] });
    expect(r.isError).toBeUndefined();
    expect(server!.requests).toHaveLength(2);
  });

  it('refuses to write through a generated/ symlink that leads out of the workspace', async () => {
    await symlink(tmp.outside, path.join(tmp.ws, 'generated'));
    const r = await generate({ prompt: 'a fox' });
    expect(r.isError).toBe(true);
    expect((r.details as { code: string }).code).toBe('symlink-escape');
    expect(await readdir(tmp.outside)).toEqual([]);
  });

  it('follows a generated/ symlink that stays inside the workspace', async () => {
    await mkdir(path.join(tmp.ws, 'art'));
    await symlink(path.join(tmp.ws, 'art'), path.join(tmp.ws, 'generated'));
    const r = await generate({ prompt: 'a fox' });
    expect(r.isError).toBeUndefined();
    expect(await readdir(path.join(tmp.ws, 'art'))).toHaveLength(1);
  });

  it('is an error, without any request, when the key is missing', async () => {
    const parsed = parseConfig({ media: { imageGeneration: { model: 'openai/gpt-image-1' } } });
    if (!parsed.ok) throw parsed.error;
    const r = (await createImageGenerateTool(parsed.value.config, {}).execute({ prompt: 'x' }, callContext(tmp.ws))) as ToolResult;
    expect(r).toEqual({ content: [{ type: 'text', text: 'image_generate is unavailable: no API key for openai: set OPENAI_API_KEY in the environment' }], details: undefined, isError: true });
  });
});

describe('imageRequest', () => {
  const cases: Array<[string, string, ImageGenerateArgs, { size: string; quality?: string }, Record<string, unknown>]> = [
    ['gpt-image: no response_format', 'gpt-image-1', { prompt: 'p' }, { size: '1024x1024' }, { model: 'gpt-image-1', prompt: 'p', n: 1, size: '1024x1024' }],
    ['dall-e: base64 asked for', 'dall-e-3', { prompt: 'p' }, { size: '1024x1024', quality: 'hd' }, { model: 'dall-e-3', prompt: 'p', n: 1, size: '1024x1024', quality: 'hd', response_format: 'b64_json' }],
    ['call size and count win over the config', 'gpt-image-1', { prompt: 'p', size: 'auto', count: 2 }, { size: '1024x1024' }, { model: 'gpt-image-1', prompt: 'p', n: 2, size: 'auto' }],
  ];
  it.each(cases)('%s', (_name, model, args, defaults, expected) => {
    expect(imageRequest(model, args, defaults)).toEqual(expected);
  });
});

describe('image_generate is metered', () => {
  async function metered(budgets: unknown, model = 'gpt-image-1') {
    server = await startFakeOpenAIMedia();
    const parsed = parseConfig({
      models: { providers: { openai: { baseUrl: server.url, models: [{ id: 'gpt-image-1', cost: { input: 5, output: 40 } }, { id: 'dall-e-3', cost: { input: 5, output: 40 } }] } }, retry: { attempts: 1 } },
      media: { imageGeneration: { model: `openai/${model}`, quality: model === 'dall-e-3' ? 'standard' : 'low' } },
      budgets,
    });
    if (!parsed.ok) throw parsed.error;
    const cfg = parsed.value.config;
    const opened = await openWardenStore({ dataDir: path.join(tmp.base, 'data') });
    if (!opened.ok) throw new Error(opened.error.message);
    const usage = new UsageService({ store: new UsageStore(opened.store.db), config: () => cfg });
    const tool = createImageGenerateTool(cfg, { OPENAI_API_KEY: 'sk-test' }, () => usage);
    return { tool, store: opened.store };
  }

  it('records the tokens the Images API reported, at the configured price', async () => {
    const { tool, store } = await metered([]);
    try {
      const r = (await tool.execute({ prompt: 'a lighthouse at dusk', count: 2 }, callContext(tmp.ws))) as ToolResult;
      expect(r.isError).toBeUndefined();
      const reported = server!.requests[0]!.reported!;
      const report = await usageReport(store.db, { since: 0, by: 'model' });
      expect(report.rows).toMatchObject([{ key: 'openai/gpt-image-1', calls: 1, inputTokens: reported.inputTokens, outputTokens: 544, costNano: reported.inputTokens * 5000 + 544 * 40_000 }]);
    } finally {
      await store.close();
    }
  });

  it('a model that reports no usage (dall-e-3) is recorded by the documented estimate: the prompt, and 1,056 output tokens an image', async () => {
    const { tool, store } = await metered([], 'dall-e-3');
    try {
      const prompt = 'a lighthouse at dusk';
      const r = (await tool.execute({ prompt, count: 2 }, callContext(tmp.ws))) as ToolResult;
      expect(r.isError).toBeUndefined();
      expect(server!.requests[0]!.reported).toBeUndefined();
      const input = Math.ceil(prompt.length / 4);
      const report = await usageReport(store.db, { since: 0, by: 'model' });
      expect(report.rows).toMatchObject([{ key: 'openai/dall-e-3', calls: 1, inputTokens: input, outputTokens: 2 * 1056, costNano: input * 5000 + 2 * 1056 * 40_000 }]);
    } finally {
      await store.close();
    }
  });

  it('a budget its bound would pass refuses before any request', async () => {
    const { tool, store } = await metered({ rules: [{ scope: 'global', per: 'day', usd: 0.01 }] });
    try {
      // Nothing spent yet and the prompt's estimate far below the cap: admitted.
      const first = (await tool.execute({ prompt: 'a lighthouse at dusk' }, callContext(tmp.ws))) as ToolResult;
      expect(first.isError).toBeUndefined();
      // 272 tokens at $40 per million is $0.01088: the cap is reached.
      const second = (await tool.execute({ prompt: 'another one' }, callContext(tmp.ws))) as ToolResult;
      expect(second.isError).toBe(true);
      expect(textOf(second)).toMatch(/^⛔ The overall budget of \$0\.0100 USD per day is reached: \$0\.0109\d* USD spent\./);
      expect(server!.requests).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
