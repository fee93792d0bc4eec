// The MCP manager against a real server built with the SDK's server side, over stdio (a child
// process) and over streamable HTTP (loopback): listing, calls and their results, errors,
// timeouts, cancellation reaching the server, a crash mid-call and the reconnect after it,
// and tools/list_changed.
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { McpManager } from '../../src/mcp/manager.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';
// @ts-expect-error the fixture is plain JavaScript
import { serveHttp } from '../fixtures/mcp/server.mjs';
import { until } from '../until.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/mcp/server.mjs');
const managers: McpManager[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
  await Promise.all(closers.splice(0).map((c) => c()));
});

function manager(servers: Record<string, unknown>, env: NodeJS.ProcessEnv = { PATH: process.env.PATH }): McpManager {
  const parsed = parseConfig({ mcp: { servers } });
  if (!parsed.ok) throw parsed.error;
  const m = new McpManager(parsed.value.config, tmpdir(), { seams: { env }, backoff: { baseMs: 50, maxMs: 200 } });
  managers.push(m);
  m.start();
  return m;
}

const ctx = (signal = new AbortController().signal) => ({ signal }) as unknown as ToolCallContext;
const textOf = (r: ToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');

async function call(m: McpManager, id: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> {
  const impl = m.implementation(id);
  if (!impl) throw new Error(`no ${id}`);
  try {
    return (await impl.execute(args, ctx(signal))) as ToolResult;
  } catch (err) {
    return { content: [{ type: 'text', text: (err as Error).message }], isError: true };
  }
}

type Kind = 'stdio' | 'http';
async function server(kind: Kind, extra: Record<string, unknown> = {}): Promise<{ m: McpManager; log: string; http?: { revive: () => void } }> {
  const log = path.join(mkdtempSync(path.join(tmpdir(), 'warden-mcp-')), 'calls.log');
  if (kind === 'stdio') {
    const m = manager({ fix: { command: process.execPath, args: [FIXTURE], env: { MCP_FIXTURE_LOG: log }, ...extra } });
    await m.ready(10_000);
    return { m, log };
  }
  process.env.MCP_FIXTURE_LOG = log;
  const http = await serveHttp();
  closers.push(() => http.close());
  const m = manager({ fix: { url: http.url, headers: { Authorization: 'Bearer t0k' }, ...extra } });
  await m.ready(10_000);
  return { m, log, http };
}

describe.each<Kind>(['stdio', 'http'])('an MCP server over %s', (kind) => {
  it('lists its tools as <server>__<tool>, connected', async () => {
    const { m } = await server(kind);
    expect(m.statuses()[0]).toMatchObject({ name: 'fix', state: 'connected', serverInfo: 'warden-fixture 1.0.0' });
    expect(m.tools().map((t) => t.id)).toEqual(expect.arrayContaining(['fix__echo', 'fix__delete_repo', 'fix__wait', 'fix__rich']));
    expect(m.tools().every((t) => t.source.kind === 'mcp')).toBe(true);
    expect(m.availability('fix__echo')).toEqual({ ok: true });
  });

  it('calls a tool and maps text, structured content, images and embedded resources', async () => {
    const { m } = await server(kind);
    expect(textOf(await call(m, 'fix__echo', { text: 'hi' }))).toBe('echo: hi');
    const rich = await call(m, 'fix__rich', {});
    expect(rich.content[0]).toEqual({ type: 'text', text: 'structuredContent:\n{\n  "count": 2,\n  "items": [\n    "a",\n    "b"\n  ]\n}' });
    // The text block that only repeats the structured content is dropped.
    expect(rich.content.slice(1).map((c) => c.type)).toEqual(['image', 'text']);
    expect(rich.content[2]).toEqual({ type: 'text', text: 'notes body' });
  });

  it('turns isError into an error result', async () => {
    const { m } = await server(kind);
    const r = await call(m, 'fix__fail', {});
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('the tracker refused: quota exceeded');
  });

  it('cancels a call on the server when the caller aborts (notifications/cancelled)', async () => {
    const { m, log } = await server(kind);
    const abort = new AbortController();
    const pending = call(m, 'fix__wait', { ms: 20_000 }, abort.signal);
    await until(() => existsSync(log) && readFileSync(log, 'utf8').includes('call wait'), 8_000, 'the call to reach the server');
    abort.abort(new Error('turn aborted'));
    const r = await pending;
    expect(r.isError).toBe(true);
    await until(() => readFileSync(log, 'utf8').includes('cancelled'), 8_000, 'the server to see the cancellation');
  });

  it('times out a call after timeoutSec and cancels it on the server', async () => {
    const { m, log } = await server(kind, { timeoutSec: 0.3 });
    const r = await call(m, 'fix__wait', { ms: 20_000 });
    expect(textOf(r)).toBe('MCP server fix did not answer within 0.3 s; the call was cancelled');
    await until(() => readFileSync(log, 'utf8').includes('cancelled'), 8_000, 'the server to see the cancellation');
    // The connection stays usable.
    expect(textOf(await call(m, 'fix__echo', { text: 'after' }))).toBe('echo: after');
  });

  it('survives the server dying mid-call: an error result, unavailable with why, then reconnected', async () => {
    const { m, http } = await server(kind);
    const r = await call(m, 'fix__crash', {});
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/MCP server fix/);
    await until(() => m.statuses()[0]!.state !== 'connected', 8_000, 'the connection to be seen lost');
    // Its tools stay known, unavailable, with why.
    expect(m.tools().some((t) => t.id === 'fix__echo')).toBe(true);
    expect(m.availability('fix__echo')).toMatchObject({ ok: false, why: expect.stringMatching(/^MCP server fix is reconnecting/) });
    http?.revive();
    await until(() => m.statuses()[0]!.state === 'connected', 10_000, 'the reconnect');
    expect(m.statuses()[0]!.failures).toBe(0);
    expect(textOf(await call(m, 'fix__echo', { text: 'back' }))).toBe('echo: back');
  });

  it('refreshes its tools on notifications/tools/list_changed, and tells listeners', async () => {
    const { m } = await server(kind);
    let changes = 0;
    m.onChange(() => changes++);
    const before = m.tools();
    await call(m, 'fix__add_tool', { name: 'Create_Ticket' });
    await until(() => m.tools().some((t) => t.id === 'fix__create_ticket'), 8_000, 'the new tool');
    expect(changes).toBeGreaterThan(0);
    expect(m.tools()).not.toBe(before);
    expect(textOf(await call(m, 'fix__create_ticket', {}))).toBe('Create_Ticket ran with {}');
  });
});

describe('stdio servers', () => {
  it('get a minimal environment plus the configured variables, never Warden\'s secrets', async () => {
    const m = manager(
      { fix: { command: process.execPath, args: [FIXTURE], env: { TEAM_TOKEN: 'configured' } } },
      { PATH: process.env.PATH, HOME: '/root', DISCORD_TOKEN: 'secret', OPENAI_API_KEY: 'sk-secret' },
    );
    await m.ready(10_000);
    const r = await call(m, 'fix__env', { names: ['TEAM_TOKEN', 'DISCORD_TOKEN', 'OPENAI_API_KEY', 'HOME'] });
    expect(JSON.parse(textOf(r))).toEqual({ TEAM_TOKEN: 'configured', DISCORD_TOKEN: null, OPENAI_API_KEY: null, HOME: '/root' });
  });

  it('a missing command is a failed server with why, retried, never thrown', async () => {
    const m = manager({ gone: { command: 'no-such-mcp-server-binary' } });
    await m.ready(5_000);
    expect(m.statuses()[0]).toMatchObject({ state: 'failed', lastError: 'command no-such-mcp-server-binary not found on PATH' });
    expect(m.tools().map((t) => t.id)).toEqual(['gone__*']);
    expect(m.availability('gone__*')).toMatchObject({ ok: false, why: 'MCP server gone failed: command no-such-mcp-server-binary not found on PATH; its tools are not known yet' });
  });

  it('toolsAllow and toolsDeny filter the listing; a disabled server never starts', async () => {
    const m = manager({
      fix: { command: process.execPath, args: [FIXTURE], toolsAllow: ['e*', 'delete_*', 'wait'], toolsDeny: ['env'] },
      off: { command: process.execPath, args: [FIXTURE], enabled: false },
    });
    await m.ready(10_000);
    expect(m.tools().map((t) => t.id)).toEqual(['fix__delete_repo', 'fix__echo', 'fix__wait']);
    expect(m.statuses().find((s) => s.name === 'off')!.state).toBe('disabled');
  });
});

describe('HTTP servers', () => {
  it('get the configured headers on every request', async () => {
    const http = await serveHttp();
    closers.push(() => http.close());
    const m = manager({ fix: { url: http.url, headers: { Authorization: 'Bearer t0k' } } });
    await m.ready(10_000);
    await call(m, 'fix__echo', { text: 'x' });
    expect(http.requests.length).toBeGreaterThan(1);
    expect(http.requests.every((r: { headers: Record<string, string> }) => r.headers.authorization === 'Bearer t0k')).toBe(true);
  });
});

describe('a reloaded config', () => {
  it('keeps a server whose start settings did not change (timeouts apply live) and restarts one whose did', async () => {
    const log = path.join(mkdtempSync(path.join(tmpdir(), 'warden-mcp-')), 'calls.log');
    const servers = (extraArg?: string, timeoutSec = 60) => ({ fix: { command: process.execPath, args: [FIXTURE, ...(extraArg ? [extraArg] : [])], env: { MCP_FIXTURE_LOG: log }, timeoutSec } });
    const m = manager(servers());
    await m.ready(10_000);
    const started = () => readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith('started')).length;
    expect(started()).toBe(1);
    const cfg = (s: Record<string, unknown>) => {
      const r = parseConfig({ mcp: { servers: s } });
      if (!r.ok) throw r.error;
      return r.value.config;
    };
    await m.reconfigure(cfg(servers(undefined, 0.3)));
    expect(textOf(await call(m, 'fix__wait', { ms: 5_000 }))).toBe('MCP server fix did not answer within 0.3 s; the call was cancelled');
    expect(started()).toBe(1);
    await m.reconfigure(cfg(servers('--again')));
    await until(() => started() === 2 && m.statuses()[0]!.state === 'connected', 8_000, 'the restarted server');
    expect(textOf(await call(m, 'fix__echo', { text: 'x' }))).toBe('echo: x');
  });
});
