// The ops listener end to end: Warden as `warden start` runs it on the embedded default (the
// web chat, no platform tokens) with a scripted model through the real OpenAI SDK. /healthz,
// /readyz and /metrics answer on their own listener; the counters move after a turn and after
// an approval decided on the web chat's card; /readyz turns 503 with the failing check named
// once the store is closed.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ServerFrame } from '../../adapters/web/adapter.js';
import { loadConfig, parseConfig } from '../../src/config/index.js';
import { runningListeners } from '../../src/net/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { startDiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import { startSlackFake } from '../fakes/slack/index.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { LIST_REQUEST, respond } from '../e2e/approvals-model.js';
import { metricValue } from '../../src/ops/testing.js';

const TOKEN = 'ops-test-web-token-0123456789abcdef';

let model: FakeModelServer;
const running: RunningWarden[] = [];
beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await model?.close();
});

function workspaceDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-ops-'));
  mkdirSync(path.join(dir, 'workspace'));
  writeFileSync(path.join(dir, 'workspace', 'notes.md'), '# notes\n');
  return dir;
}

async function start(dir: string, ops: Record<string, unknown> = { port: 0 }): Promise<RunningWarden> {
  const parsed = parseConfig({
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'coding', exec: { host: 'gateway' } },
    channels: { web: { port: 0, token: TOKEN } },
    ops,
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  return started.warden;
}

async function webChat(warden: RunningWarden) {
  const frames: ServerFrame[] = [];
  const waiters: Array<() => void> = [];
  const ws = new WebSocket(`${warden.webUrl!.replace('http', 'ws').replace(/\/$/, '')}/ws`, { headers: { cookie: `warden_token=${TOKEN}` } });
  ws.on('message', (raw) => {
    frames.push(JSON.parse(raw.toString()) as ServerFrame);
    for (const w of waiters.splice(0)) w();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const waitFor = async (pred: (f: ServerFrame) => boolean, from = 0): Promise<ServerFrame> => {
    for (;;) {
      const hit = frames.slice(from).find(pred);
      if (hit) return hit;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  let n = 0;
  return {
    frames,
    waitFor,
    say: (text: string) => ws.send(JSON.stringify({ type: 'message', id: `msg-ops-${String(++n).padStart(4, '0')}`, text })),
    approve: (id: string) => ws.send(JSON.stringify({ type: 'approve', id, decision: 'allow-once' })),
    close: () => ws.close(),
  };
}

const get = async (base: string, p: string) => {
  const res = await fetch(`${base}${p}`);
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
};

/** Polls /metrics until `pred` holds (a counter moves just after the reply is sent). */
async function metricsWhen(base: string, pred: (text: string) => boolean, what: string): Promise<string> {
  const until = Date.now() + 10_000;
  for (;;) {
    const { text } = await get(base, '/metrics');
    if (pred(text)) return text;
    if (Date.now() > until) throw new Error(`metrics never showed ${what}:\n${text.split('\n').filter((l) => l.startsWith('warden_')).join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the ops listener', () => {
  it('answers /healthz, /readyz and /metrics on the embedded default; counters move after a turn and an approval; /readyz is 503 once the store is closed', async () => {
    const warden = await start(workspaceDir());
    const base = warden.opsUrl!;
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(base).not.toBe(warden.webUrl?.replace(/\/$/, ''));

    expect(await get(base, '/healthz')).toMatchObject({ status: 200, text: JSON.stringify({ status: 'ok' }) });
    const ready = await get(base, '/readyz');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toEqual({ status: 'ready', checks: { store: { ok: true }, migrations: { ok: true }, adapters: { ok: true } } });
    expect((await get(base, '/nope')).status).toBe(404);

    const before = await get(base, '/metrics');
    expect(before.status).toBe(200);
    expect(before.type).toContain('text/plain');
    for (const name of ['warden_turns_total', 'warden_tool_calls_total', 'warden_approvals_pending', 'warden_approvals_decided_total', 'warden_approval_decision_seconds', 'warden_queue_depth', 'warden_model_requests_total', 'warden_model_request_duration_seconds', 'warden_store_operation_seconds', 'process_cpu_user_seconds_total']) {
      expect(before.text).toContain(`# TYPE ${name} `);
    }
    const completed = (t: string) => metricValue(t, 'warden_turns_total', { status: 'completed' });
    const modelOk = (t: string) => metricValue(t, 'warden_model_requests_total', { provider: 'openai', model: 'gpt-test', outcome: 'ok' });
    const appends = (t: string) => metricValue(t, 'warden_store_operation_seconds_count', { operation: 'transcript_append' });

    // A turn: one model request, one completed turn, its transcript written.
    const chat = await webChat(warden);
    const mark = chat.frames.length;
    chat.say('ping');
    await chat.waitFor((f) => f.type === 'message' && f.message.text.includes('pong'), mark);
    const afterTurn = await metricsWhen(base, (t) => completed(t) >= completed(before.text) + 1, 'the completed turn');
    expect(modelOk(afterTurn)).toBeGreaterThanOrEqual(modelOk(before.text) + 1);
    expect(appends(afterTurn)).toBeGreaterThan(appends(before.text));
    expect(metricValue(afterTurn, 'warden_model_request_duration_seconds_count', { provider: 'openai', model: 'gpt-test' })).toBeGreaterThanOrEqual(1);

    // An approval: the card is pending, then decided on the page; the exec call runs.
    const cardMark = chat.frames.length;
    chat.say(LIST_REQUEST);
    const card = (await chat.waitFor((f) => f.type === 'card' && f.card.status === 'pending', cardMark)) as Extract<ServerFrame, { type: 'card' }>;
    const waiting = await metricsWhen(base, (t) => metricValue(t, 'warden_approvals_pending') === 1, 'one pending approval');
    expect(metricValue(waiting, 'warden_approvals_requested_total', { kind: 'exec' })).toBe(metricValue(before.text, 'warden_approvals_requested_total', { kind: 'exec' }) + 1);
    chat.approve(card.card.id);
    const decided = await metricsWhen(
      base,
      (t) => metricValue(t, 'warden_approvals_decided_total', { kind: 'exec', outcome: 'allow-once' }) === 1 && metricValue(t, 'warden_tool_calls_total', { tool: 'exec', status: 'ok' }) >= 1,
      'the decided approval and the exec call',
    );
    expect(metricValue(decided, 'warden_approvals_pending')).toBe(0);
    expect(metricValue(decided, 'warden_approval_decision_seconds_count', { kind: 'exec', outcome: 'allow-once' })).toBe(1);
    expect(metricValue(decided, 'warden_approval_decision_seconds_bucket', { kind: 'exec', outcome: 'allow-once', le: '+Inf' })).toBe(1);
    chat.close();

    // The store goes away under the running process: not ready, and the reason says why.
    await warden.store.close();
    const down = await get(base, '/readyz');
    expect(down.status).toBe(503);
    const body = JSON.parse(down.text);
    expect(body).toMatchObject({ status: 'not ready', checks: { store: { ok: false, reason: 'the store is closed' }, migrations: { ok: false }, adapters: { ok: true } } });
    expect(body.reason).toContain('store: the store is closed');
    // Liveness is the process, not its dependencies.
    expect((await get(base, '/healthz')).status).toBe(200);
  });

  it('runs in a Discord-only Warden too (no web chat), and can be switched off', async () => {
    const fake = await startDiscordFake();
    try {
      const dir = workspaceDir();
      const parsed = parseConfig({ channels: { discord: { token: 't', apiBaseUrl: fake.apiBaseUrl } }, ops: { port: 0 }, dataDir: path.join(dir, 'data') });
      if (!parsed.ok) throw parsed.error;
      const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {}, shutdownGraceMs: 300 });
      if (!started.ok) throw started.error;
      running.push(started.warden);
      expect(started.warden.webUrl).toBeUndefined();
      const ready = await get(started.warden.opsUrl!, '/readyz');
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.text).checks.adapters).toEqual({ ok: true });
      await started.warden.stop();
      running.splice(0);
    } finally {
      await fake.close();
    }
    const off = await start(workspaceDir(), { enabled: false });
    expect(off.opsUrl).toBeUndefined();
  });

  it('Slack in Socket Mode: ready while its WebSocket is open, 503 naming Slack once the connection is gone', async () => {
    const fake = await startSlackFake();
    let closed = false;
    try {
      const dir = workspaceDir();
      const parsed = parseConfig({ channels: { slack: { botToken: 'xoxb-fake', appToken: 'xapp-fake', apiUrl: fake.apiUrl } }, ops: { port: 0 }, dataDir: path.join(dir, 'data') });
      if (!parsed.ok) throw parsed.error;
      const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {}, shutdownGraceMs: 300 });
      if (!started.ok) throw started.error;
      running.push(started.warden);
      const base = started.warden.opsUrl!;
      expect((await get(base, '/readyz')).status).toBe(200);
      await fake.close();
      closed = true;
      const until = Date.now() + 10_000;
      let last = await get(base, '/readyz');
      while (last.status !== 503 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        last = await get(base, '/readyz');
      }
      expect(last.status).toBe(503);
      expect(JSON.parse(last.text)).toMatchObject({ reason: 'adapters: slack not connected', checks: { store: { ok: true }, adapters: { ok: false, reason: 'slack not connected' } } });
    } finally {
      if (!closed) await fake.close();
    }
  });

  it('a port already taken is logged, and Warden runs without the listener', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const warden = await start(workspaceDir(), { port });
      expect(warden.opsUrl).toBeUndefined();
      expect(warden.gateway.accepting).toBe(true);
      expect((await warden.readiness()).ready).toBe(true);
    } finally {
      blocker.close();
    }
  });

  it('a config reload that changes the ops block moves the listener; one that does not keeps it', async () => {
    const dir = workspaceDir();
    const file = path.join(dir, 'warden.config.yaml');
    const free = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const port = (probe.address() as { port: number }).port;
        probe.close(() => resolve(port));
      });
    });
    const write = (ops: string) => writeFileSync(file, `channels:\n  web: { port: 0, token: ${TOKEN} }\nops: ${ops}\ndataDir: ./data\ngateway: { reload: { watch: false } }\n`);
    write('{ port: 0 }');
    const loaded = loadConfig({ file, cwd: dir, env: {} });
    if (!loaded.ok) throw loaded.error;
    const started = await startWarden(loaded.value, { env: {}, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    const warden = started.warden;
    running.push(warden);
    const first = warden.opsUrl!;
    write(`{ port: ${free} }`);
    expect(await warden.config.reloader.reloadFile('reload')).toMatchObject({ ok: true, failed: [] });
    expect(warden.opsUrl).toBe(`http://127.0.0.1:${free}`);
    expect((await get(warden.opsUrl!, '/healthz')).status).toBe(200);
    await expect(fetch(`${first}/healthz`)).rejects.toThrow();
    expect(runningListeners().filter((l) => l.name === 'ops listener').map((l) => l.port)).toContain(free);
    write('{ enabled: false }');
    await warden.config.reloader.reloadFile('reload');
    expect(warden.opsUrl).toBeUndefined();
    expect(runningListeners().some((l) => l.name === 'ops listener' && l.port === free)).toBe(false);
  });

  it('stops with Warden', async () => {
    const warden = await start(workspaceDir());
    const base = warden.opsUrl!;
    expect((await get(base, '/readyz')).status).toBe(200);
    await warden.stop();
    running.splice(0);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});
