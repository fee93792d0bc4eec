import { readdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeSpeech, startFakeOpenAIMedia, type FakeMediaOptions } from '../../../../test/fakes/models/openai-media-fake.js';
import type { FakeModelServer } from '../../../../test/fakes/models/server.js';
import { openWardenStore } from '../../../app/migrations.js';
import { parseConfig } from '../../../config/index.js';
import { usageReport } from '../../../usage/report.js';
import { UsageService } from '../../../usage/service.js';
import { UsageStore } from '../../../usage/store.js';
import { callContext, makeTempWorkspace, textOf, type TempWorkspace } from '../fs/test-support.js';
import type { ToolResult } from '../../types.js';
import { createTtsTool, type TtsArgs } from './tts.js';

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

/** Through a compatible server (provider `local`, no key needed), as Warden would talk to one. */
async function speak(args: TtsArgs, options: FakeMediaOptions = {}): Promise<ToolResult> {
  server = await startFakeOpenAIMedia(options);
  const parsed = parseConfig({
    models: { providers: { local: { api: 'openai', baseUrl: server.url } }, retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 5 } },
    media: { tts: { model: 'local/gpt-4o-mini-tts', voice: 'coral' } },
  });
  if (!parsed.ok) throw parsed.error;
  return (await createTtsTool(parsed.value.config, {}).execute(args, callContext(tmp.ws))) as ToolResult;
}

describe('tts', () => {
  it('speaks the text with the configured voice and writes the audio under generated/', async () => {
    const r = await speak({ text: 'Deploy finished.' });
    expect(r.isError).toBeUndefined();
    const files = await readdir(path.join(tmp.ws, 'generated'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^speech-\d{8}-\d{6}-[0-9a-f]{6}\.mp3$/);
    const audio = await readFile(path.join(tmp.ws, 'generated', files[0]!));
    expect(audio).toEqual(fakeSpeech('mp3', 'Deploy finished.'));
    expect(textOf(r)).toBe(`Spoke 16 characters with local/gpt-4o-mini-tts (voice coral); the mp3 audio is saved as generated/${files[0]} (${audio.length} bytes).`);
    expect(r.details).toEqual({ model: 'local/gpt-4o-mini-tts', voice: 'coral', format: 'mp3', path: `generated/${files[0]}`, bytes: audio.length });
    expect(server!.requests[0]!.path).toBe('/v1/audio/speech');
    expect(server!.requests[0]!.body).toEqual({ model: 'gpt-4o-mini-tts', input: 'Deploy finished.', voice: 'coral', response_format: 'mp3' });
  });

  it('lets the call choose voice, format and delivery instructions', async () => {
    const r = await speak({ text: 'Hi', voice: 'sage', format: 'wav', instructions: 'cheerful' });
    expect(r.isError).toBeUndefined();
    expect(server!.requests[0]!.body).toEqual({ model: 'gpt-4o-mini-tts', input: 'Hi', voice: 'sage', response_format: 'wav', instructions: 'cheerful' });
    const [file] = await readdir(path.join(tmp.ws, 'generated'));
    expect(file).toMatch(/\.wav$/);
    expect(await readFile(path.join(tmp.ws, 'generated', file!))).toEqual(fakeSpeech('wav', 'Hi'));
  });

  const failures: Array<[string, FakeMediaOptions['script'], RegExp, number]> = [
    ['a rate limit that outlasts the retries', [{ kind: 'error', status: 429, message: 'Rate limit reached' }, { kind: 'error', status: 429, message: 'Rate limit reached' }], /^⚠️ The model local\/gpt-4o-mini-tts is rate-limiting requests \(HTTP 429\) after 2 tries: .*Rate limit reached/, 2],
    ['a server error that outlasts the retries', [{ kind: 'error', status: 500, message: 'speech backend down' }, { kind: 'error', status: 503, message: 'speech backend down' }], /^⚠️ The model local\/gpt-4o-mini-tts returned a server error \(HTTP 503\) after 2 tries: .*speech backend down/, 2],
    ['an unknown voice (not retried)', [{ kind: 'error', status: 400, message: "Invalid value for 'voice'" }], /^⚠️ The model local\/gpt-4o-mini-tts rejected the request \(HTTP 400\): .*Invalid value for 'voice'/, 1],
  ];
  it.each(failures)('returns %s as an error result and writes nothing', async (_name, script, message, requests) => {
    const r = await speak({ text: 'hello' }, { script });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(message);
    expect(server!.requests).toHaveLength(requests);
    await expect(readdir(path.join(tmp.ws, 'generated'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses to write through a generated/ symlink that leads out of the workspace', async () => {
    await symlink(tmp.outside, path.join(tmp.ws, 'generated'));
    const r = await speak({ text: 'hello' });
    expect(r.isError).toBe(true);
    expect((r.details as { code: string }).code).toBe('symlink-escape');
    expect(await readdir(tmp.outside)).toEqual([]);
  });

  it('stops with the turn: an aborted call throws instead of reporting a failure', async () => {
    server = await startFakeOpenAIMedia({ script: [{ kind: 'reply', delayMs: 5_000 }] });
    const parsed = parseConfig({ models: { providers: { local: { api: 'openai', baseUrl: server.url } } }, media: { tts: { model: 'local/tts-1' } } });
    if (!parsed.ok) throw parsed.error;
    const controller = new AbortController();
    const ctx = { ...callContext(tmp.ws), signal: controller.signal };
    const pending = createTtsTool(parsed.value.config, {}).execute({ text: 'long' }, ctx);
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('is an error naming the missing section when tts is not configured', async () => {
    const parsed = parseConfig({});
    if (!parsed.ok) throw parsed.error;
    const r = (await createTtsTool(parsed.value.config, {}).execute({ text: 'x' }, callContext(tmp.ws))) as ToolResult;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('tts is unavailable: not configured: set media.tts.model (e.g. openai/gpt-4o-mini-tts)');
  });
});

describe('tts is metered like a model call', () => {
  async function metered(budgets: unknown, cost?: { input: number; output: number }) {
    server = await startFakeOpenAIMedia();
    const parsed = parseConfig({
      models: { providers: { local: { api: 'openai', baseUrl: server.url, ...(cost ? { models: [{ id: 'gpt-4o-mini-tts', cost }] } : {}) } }, retry: { attempts: 1 } },
      media: { tts: { model: 'local/gpt-4o-mini-tts', voice: 'coral' } },
      budgets,
    });
    if (!parsed.ok) throw parsed.error;
    const cfg = parsed.value.config;
    const opened = await openWardenStore({ dataDir: path.join(tmp.base, 'data') });
    if (!opened.ok) throw new Error(opened.error.message);
    const usage = new UsageService({ store: new UsageStore(opened.store.db), config: () => cfg });
    return { tool: createTtsTool(cfg, {}, () => usage), store: opened.store };
  }

  it.each<[string, TtsArgs, number]>([
    ['the text, 4 characters a token', { text: 'Deploy finished.' }, 4],
    ['text and delivery instructions', { text: 'Deploy finished.', instructions: 'calm' }, 5],
    ['one character', { text: 'y' }, 1],
  ])('records the estimate: %s', async (_name, args, tokens) => {
    const { tool, store } = await metered([], { input: 60, output: 0 });
    try {
      const r = (await tool.execute(args, callContext(tmp.ws))) as ToolResult;
      expect(r.isError).toBeUndefined();
      const report = await usageReport(store.db, { since: 0, by: 'model' });
      expect(report.rows).toMatchObject([{ key: 'local/gpt-4o-mini-tts', calls: 1, inputTokens: tokens, outputTokens: 0, costNano: tokens * 60_000 }]);
    } finally {
      await store.close();
    }
  });

  it('a token budget that is reached refuses before any request, and says why', async () => {
    const { tool, store } = await metered({ rules: [{ scope: 'global', per: 'day', tokens: 10 }] });
    try {
      // 32 characters: 8 tokens, under the cap; recorded, they leave no room for the next call's 2.
      const first = (await tool.execute({ text: 'x'.repeat(32) }, callContext(tmp.ws))) as ToolResult;
      expect(first.isError).toBeUndefined();
      const second = (await tool.execute({ text: 'again' }, callContext(tmp.ws))) as ToolResult;
      expect(second.isError).toBe(true);
      expect(textOf(second)).toMatch(/^⛔ The overall budget of 10 tokens per day is reached: 8 tokens spent\./);
      expect(second.details).toMatchObject({ code: 'budget' });
      expect(server!.requests).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('a US-dollar budget with no known price for the speech model: not called (price unknown)', async () => {
    const { tool, store } = await metered({ rules: [{ scope: 'global', per: 'day', usd: 1 }] });
    try {
      const r = (await tool.execute({ text: 'hello' }, callContext(tmp.ws))) as ToolResult;
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain('local/gpt-4o-mini-tts has no known price (price unknown)');
      expect(server!.requests).toHaveLength(0);
    } finally {
      await store.close();
    }
  });

  it('a failed call records nothing and gives its hold back', async () => {
    const { store } = await metered([]);
    await server!.close();
    server = await startFakeOpenAIMedia({ script: [{ kind: 'error', status: 400, message: 'bad voice' }] });
    const parsed = parseConfig({ models: { providers: { local: { api: 'openai', baseUrl: server.url } }, retry: { attempts: 1 } }, media: { tts: { model: 'local/gpt-4o-mini-tts', voice: 'coral' } }, budgets: { rules: [{ scope: 'global', per: 'day', tokens: 10 }] } });
    if (!parsed.ok) throw parsed.error;
    const usage = new UsageService({ store: new UsageStore(store.db), config: () => parsed.value.config });
    try {
      const r = (await createTtsTool(parsed.value.config, {}, () => usage).execute({ text: 'x'.repeat(40) }, callContext(tmp.ws))) as ToolResult;
      expect(r.isError).toBe(true);
      expect((await usageReport(store.db, { since: 0, by: 'model' })).rows).toEqual([]);
      expect((await usage.budgetsFor({ agentId: 'main', purpose: 'tts' }))[0]).toMatchObject({ spent: 0 });
    } finally {
      await store.close();
    }
  });
});
