// `warden start`'s first step in one process: the web chat's listener opened before the rest of
// Warden, a message sent to it before the rest started delivered once it has, and the configs
// refused before anything listens.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ServerFrame } from '../../adapters/web/adapter.js';
import { ConfigError, parseConfig, type LoadedConfig } from '../config/index.js';
import { runningListeners } from '../net/index.js';
import { openWebChatFirst, startRefusal } from './start-first.js';
import { startWarden, type RunningWarden } from './startup.js';

const TOKEN = 'start-first-token-0123456789abcdef0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function loaded(raw: object): LoadedConfig {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-start-first-'));
  const parsed = parseConfig({ ops: { port: 0 }, dataDir: path.join(dir, 'data'), ...raw });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return { ...parsed.value, baseDir: dir };
}

const webListeners = () => runningListeners().filter((l) => l.name === 'web chat');

describe('warden start: the web chat listener first', () => {
  it('answers the page before the rest starts; a message sent meanwhile is delivered once it has', async () => {
    const config = loaded({ channels: { web: { port: 0, token: TOKEN } } });
    const first = await openWebChatFirst(config, {});
    if (!first.ok || !first.web) throw new Error('no listener');
    const { listener } = first.web;
    cleanups.push(() => listener.close());
    const page = await fetch(listener.url, { headers: AUTH });
    expect(page.status).toBe(200);
    expect(await (await fetch(`${listener.url}healthz`, { headers: AUTH })).json()).toEqual({ ok: true, ready: false });
    // Nothing of the store yet: the listener is all there is.
    expect(existsSync(path.join(config.config.dataDir!, 'warden.sqlite'))).toBe(false);

    // The page's socket connects now; the server takes it once the chat is attached.
    const frames: ServerFrame[] = [];
    const ws = new WebSocket(`${listener.url.replace('http', 'ws')}ws`, { headers: AUTH });
    const id = randomUUID();
    ws.on('open', () => ws.send(JSON.stringify({ type: 'message', id, text: '/status' })));
    const answered = new Promise<void>((resolve) =>
      ws.on('message', (raw) => {
        frames.push(JSON.parse(raw.toString()) as ServerFrame);
        if (frames.some((f) => f.type === 'message' && f.message.role === 'bot')) resolve();
      }),
    );
    await new Promise((r) => setTimeout(r, 150));
    expect(ws.readyState).toBe(WebSocket.CONNECTING);

    const started = await startWarden(config, { env: {}, web: first.web, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    const warden: RunningWarden = started.warden;
    cleanups.push(() => warden.stop());
    expect(warden.webUrl).toBe(listener.url);
    await answered;
    expect(frames[0]!.type).toBe('history');
    expect(frames).toContainEqual({ type: 'ack', id, status: 'accepted' });
    const reply = frames.find((f) => f.type === 'message' && f.message.role === 'bot');
    expect(reply && reply.type === 'message' && reply.message.text).toMatch(/status|session|model/i);
    expect(await (await fetch(`${listener.url}healthz`, { headers: AUTH })).json()).toEqual({ ok: true, ready: true });
    ws.close();

    await warden.stop();
    await expect(fetch(listener.url, { headers: AUTH })).rejects.toThrow();
    expect(webListeners()).toEqual([]);
  }, 60_000);

  it.each([
    ['a web chat beyond loopback without a token', { channels: { web: { host: '0.0.0.0', port: 0 } } }, 'channels.web.token'],
    ['a Slack bot token pasted as a user token', { channels: { slack: { botToken: 'xoxp-1-2-abc', appToken: 'xapp-1-abc' } } }, 'channels.slack.botToken'],
    ['a store.url of another scheme', { channels: { web: { port: 0, token: TOKEN } }, store: { url: 'mysql://root@127.0.0.1/warden' } }, 'store.url'],
    ['a store.url that is not a URL', { channels: { web: { port: 0, token: TOKEN } }, store: { url: 'not a url' } }, 'store.url'],
  ])('refuses %s before anything listens or is written, naming the key', async (_name, raw, key) => {
    const config = loaded(raw);
    const refused = startRefusal(config).error;
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused!.problems.map((p) => p.path)).toContain(key);
    const first = await openWebChatFirst(config, {});
    expect(first.ok).toBe(false);
    expect(!first.ok && first.error.message).toContain(key);
    expect(webListeners()).toEqual([]);
    expect(existsSync(config.config.dataDir!)).toBe(false);
  });

  it('opens nothing ahead when the web chat does not run (a platform is configured)', async () => {
    const first = await openWebChatFirst(loaded({ channels: { discord: { token: 'x'.repeat(24) + '.' + 'y'.repeat(6) + '.' + 'z'.repeat(27) } } }), {});
    expect(first).toEqual({ ok: true, web: undefined });
    expect(webListeners()).toEqual([]);
  });
});
