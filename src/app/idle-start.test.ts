// What a start loads ahead of its first message, and that what it leaves out still comes when
// used: no tool preload without a model (an owner's /exec loads exec then), and a reload that
// adds a model gives the running bot its turn loop, loaded at that moment.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ServerFrame } from '../../adapters/web/adapter.js';
import { startFakeOpenAI } from '../../test/fakes/models/openai-fake.js';
import type { FakeModelServer } from '../../test/fakes/models/server.js';
import { loadConfig, parseConfig } from '../config/index.js';
import { toolsToPreload } from './preload.js';
import { startWarden, type RunningWarden } from './startup.js';

const TOKEN = 'idle-start-token-0123456789abcdef0123456789';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the tools a start preloads', () => {
  const MODEL = { models: { default: 'ollama/model-x', providers: { ollama: { api: 'openai', baseUrl: 'http://127.0.0.1:9' } } } };
  it.each([
    ['no model: nothing (an owner’s /exec loads exec at its first call)', {}, [], ['exec']],
    ['a model: exec only (every other tool loads at its first call)', MODEL, ['exec'], ['read', 'message', 'web_fetch', 'sessions_list']],
    ['a model, exec denied to it: exec still (the /exec command runs it)', { ...MODEL, tools: { deny: ['exec'] } }, ['exec'], []],
  ])('%s', (_name, raw, includes, excludes) => {
    const parsed = parseConfig({ channels: { web: { port: 0, token: TOKEN } }, ...raw });
    if (!parsed.ok) throw new Error(parsed.error.message);
    const ids = toolsToPreload(parsed.value.config);
    for (const id of includes) expect(ids).toContain(id);
    for (const id of excludes) expect(ids).not.toContain(id);
    if (includes.length === 0) expect(ids).toEqual([]);
  });
});

/** A page's socket: sends a message and waits for the next bot message or card (the first `wanted` one when given). */
async function webChat(url: string) {
  const frames: ServerFrame[] = [];
  const ws = new WebSocket(`${url.replace('http', 'ws')}ws`, { headers: { authorization: `Bearer ${TOKEN}`, origin: url.replace(/\/$/, '') } });
  let wake: (() => void) | undefined;
  ws.on('message', (raw) => {
    frames.push(JSON.parse(raw.toString()) as ServerFrame);
    wake?.();
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const next = async (from: number, wanted: (f: ServerFrame) => boolean): Promise<ServerFrame> => {
    for (;;) {
      const found = frames.slice(from).find((f) => ((f.type === 'message' && f.message.role === 'bot') || f.type === 'card') && wanted(f));
      if (found) return found;
      await new Promise<void>((r) => (wake = r));
    }
  };
  return {
    send: (text: string, wanted: (f: ServerFrame) => boolean = () => true) => {
      const from = frames.length;
      ws.send(JSON.stringify({ type: 'message', id: randomUUID(), text }));
      return next(from, wanted);
    },
    close: () => ws.close(),
  };
}

describe('a start without a model', () => {
  it('runs /exec on first use, and a reload that adds a model gives the bot its turn loop', async () => {
    const model: FakeModelServer = await startFakeOpenAI({ script: [{ kind: 'reply', text: 'Hello from the model.' }] });
    cleanups.push(() => model.close());
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-idle-start-'));
    const file = path.join(dir, 'warden.config.yaml');
    const base = `channels:\n  web: { port: 0, token: ${TOKEN} }\nops: { enabled: false }\ndataDir: ./data\ngateway: { reload: { watch: false } }\n`;
    writeFileSync(file, base);
    const loaded = loadConfig({ file, cwd: dir, env: {} });
    if (!loaded.ok) throw loaded.error;
    const started = await startWarden(loaded.value, { env: {}, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    const warden: RunningWarden = started.warden;
    cleanups.push(() => warden.stop());
    await warden.preloaded;
    const chat = await webChat(warden.webUrl!);
    cleanups.push(async () => chat.close());

    const before = await chat.send('hello');
    expect(before.type === 'message' && before.message.text).toMatch(/No model is configured/);
    // exec was not preloaded: its first call loads it, and asks as it always did.
    const card = await chat.send('/exec echo idle');
    expect(card.type === 'card' && card.card.title).toMatch(/Exec approval required/);

    writeFileSync(file, `${base}models:\n  default: ollama/model-x\n  providers:\n    ollama: { api: openai, baseUrl: '${model.url}' }\n`);
    expect(await warden.config.reloader.reloadFile('reload')).toMatchObject({ ok: true, changed: expect.arrayContaining(['models.default']) });
    // (The pending /exec card gets its own notice first.)
    const after = await chat.send('hello again', (f) => f.type === 'message' && !f.message.text.startsWith('Approval '));
    expect(after.type === 'message' && after.message.text).toContain('Hello from the model.');
    expect(model.requests.length).toBe(1);
  }, 60_000);
});
