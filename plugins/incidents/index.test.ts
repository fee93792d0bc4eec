import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPluginRuntime, type PluginRuntime } from '../../src/plugins/runtime.js';
import { resolveToolSurface } from '../../src/policy/surface.js';
import { config, turn } from '../../src/policy/testing.js';
import type { ToolCallContext } from '../../src/tools/types.js';
import { withoutUntrustedTags } from './index.js';

const PLUGINS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A loopback stand-in for the incident tracker's API: it records requests and keeps incidents in memory. */
interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  body: any;
}
let server: Server;
let baseUrl: string;
const seen: Seen[] = [];
const incidents: Array<Record<string, unknown>> = [{ id: 'INC-1', title: 'API latency', severity: 'sev3', status: 'investigating' }];

beforeAll(async () => {
  server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (req.headers.authorization !== 'Bearer tracker-token') return send(401, { error: 'bad token' });
    if (req.method === 'GET' && req.url?.startsWith('/api/incidents')) return send(200, incidents.filter((i) => i.status !== 'resolved'));
    if (req.method === 'POST' && req.url === '/api/incidents') {
      const created = { id: `INC-${incidents.length + 1}`, status: 'investigating', ...body };
      incidents.push(created);
      return send(201, created);
    }
    const m = /^\/api\/incidents\/([^/]+)$/.exec(req.url ?? '');
    if (req.method === 'PATCH' && m) {
      const found = incidents.find((i) => i.id === decodeURIComponent(m[1]!));
      if (!found) return send(404, { error: 'no such incident' });
      Object.assign(found, body.status ? { status: body.status } : {});
      return send(200, found);
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function loaded(pluginConfig: Record<string, unknown>, tools: Record<string, unknown> = { profile: 'messaging' }): Promise<{ runtime: PluginRuntime; cfg: ReturnType<typeof config> }> {
  const cfg = config({ plugins: { paths: [PLUGINS], allow: ['incidents'], entries: { incidents: { config: pluginConfig } } }, tools });
  const runtime = createPluginRuntime(cfg, PLUGINS);
  await runtime.load(5_000);
  return { runtime, cfg };
}

const callCtx = (): ToolCallContext => ({ toolCallId: 'c1', signal: new AbortController().signal } as ToolCallContext);
const bob = turn({ provider: 'discord', chat: 'channel', guildId: 'G', channelId: 'C7', channelName: 'ops', senderId: 'bob-1' });

describe('the incidents plugin', () => {
  it('loads from its folder; incident_update is optional', async () => {
    const { runtime, cfg } = await loaded({ baseUrl, token: 'tracker-token' });
    expect(runtime.plugins.find((p) => p.id === 'incidents')).toMatchObject({ id: 'incidents', status: 'loaded', commands: ['incident'], config: { baseUrl, token: 'tracker-token', timeoutMs: 10_000 } });
    const inputs = { plugins: runtime.tools, implemented: (id: string, ctx?: typeof bob) => runtime.availability(id, ctx) };
    expect(resolveToolSurface(cfg, bob, inputs).tools.filter((t) => t.startsWith('incident'))).toEqual(['incident_create', 'incident_list']);
    const granted = config({ plugins: cfg.plugins, tools: { profile: 'messaging', alsoAllow: ['incident_update'] } });
    expect(resolveToolSurface(granted, bob, inputs).tools).toContain('incident_update');
  });

  it('opens an incident with the turn\'s sender and channel, with the token only in the header', async () => {
    const { runtime } = await loaded({ baseUrl, token: 'tracker-token' });
    const tool = runtime.implementation('incident_create', bob)!;
    const out = (await tool.execute({ title: 'db is down', severity: 'sev1' }, callCtx())) as { content: Array<{ text: string }>; details: Record<string, unknown> };
    const request = seen.at(-1)!;
    expect(request).toMatchObject({ method: 'POST', url: '/api/incidents', auth: 'Bearer tracker-token', body: { title: 'db is down', severity: 'sev1', reportedBy: 'discord:bob-1', reportedIn: '#ops' } });
    expect(out.details).toMatchObject({ id: expect.stringMatching(/^INC-/), title: 'db is down' });
    expect(JSON.stringify(out)).not.toContain('tracker-token');
  });

  it('lists and updates through the API', async () => {
    const { runtime } = await loaded({ baseUrl, token: 'tracker-token' });
    const listed = (await runtime.implementation('incident_list', bob)!.execute({}, callCtx())) as { details: unknown[] };
    expect(listed.details.length).toBeGreaterThan(0);
    expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/api/incidents?status=open' });
    const updated = (await runtime.implementation('incident_update', bob)!.execute({ id: 'INC-1', status: 'resolved' }, callCtx())) as { details: { status: string } };
    expect(updated.details.status).toBe('resolved');
    expect(seen.at(-1)).toMatchObject({ method: 'PATCH', url: '/api/incidents/INC-1', body: { status: 'resolved', by: 'discord:bob-1' } });
  });

  it('a tracker error becomes an error the call chain reports, with the status', async () => {
    const { runtime } = await loaded({ baseUrl, token: 'wrong' });
    await expect(runtime.implementation('incident_list', bob)!.execute({}, callCtx())).rejects.toThrow(/answered 401/);
  });

  it('does not load without its token (the config is checked against its schema)', async () => {
    const { runtime } = await loaded({ baseUrl });
    expect(runtime.plugins.find((p) => p.id === 'incidents')).toMatchObject({ status: 'error', why: 'plugins.entries.incidents.config.token: is required' });
    expect(runtime.availability('incident_list', bob)).toEqual({ ok: false, why: 'plugin incidents did not load: plugins.entries.incidents.config.token: is required' });
  });
});

describe('withoutUntrustedTags', () => {
  const pattern = /^<untrusted[^>]*>|<\/untrusted[^>]*>$/g;
  it.each([
    '<untrusted-ab source="tool:incident_list">\n[{"id":"INC-1"}]\n</untrusted-ab>',
    '<untrusted-ab>[]</untrusted-ab>',
    '[]',
    '<untrusted-ab source="x">[]',
    '[]</untrusted-ab>',
    '</untrusted-ab>',
    '<untrusted>',
    '<untrusted',
    '<untrusted-a>x</untrusted-b>y>',
    '<untrusted-a>x</untrusted-b>y</untrusted-c>',
    '<untrusted-a>x</untrusted>',
    '</untrusted>',
    '</untrusted',
    '>',
    '',
    '<untrusted-a></untrusted-b></untrusted-c>',
    'a</untrusted-1</untrusted-2>',
    '<untrusted></untrusted>',
  ])('%j as the former pattern reads it', (text) => {
    expect(withoutUntrustedTags(text)).toBe(text.replace(pattern, ''));
  });

  it('returns at once on 100,000 closing tags that never close', () => {
    const hostile = '</untrusted'.repeat(100_000);
    expect(withoutUntrustedTags(hostile)).toBe(hostile);
    expect(withoutUntrustedTags(`${hostile}x>`)).toBe('');
  });
});
