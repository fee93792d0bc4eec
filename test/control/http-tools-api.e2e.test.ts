// The HTTP tools API end to end: a running Warden with gateway.http on loopback, real requests.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfigInput } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import type { HttpToolsApi } from '../../src/gateway/http/server.js';
import { auditGatewayHttp } from '../../src/gateway/http/audit.js';
import { AuditLog } from '../../src/store/audit.js';
import { checkUrl } from '../../src/net/index.js';
import { main } from '../../src/cli.js';

const TOKEN = 'http-token-0123456789abcdef';
const CI_TOKEN = 'ci-token-0123456789abcdefgh';
let running: RunningWarden | undefined;
let lastDir = '';

afterEach(async () => {
  await running?.stop();
  running = undefined;
});

async function start(extra: WardenConfigInput['gateway'] = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-http-'));
  lastDir = dir;
  mkdirSync(path.join(dir, 'workspace'));
  writeFileSync(path.join(dir, 'workspace', 'notes.md'), 'hello from the workspace\n');
  const raw = {
    dataDir: path.join(dir, 'data'),
    agents: { defaults: { workspace: path.join(dir, 'workspace') } },
    tools: { profile: 'coding' },
    channels: { web: { port: 0 } },
    gateway: { http: { enabled: true, port: 0, token: TOKEN, tokens: { ci: CI_TOKEN }, ...extra.http } },
  };
  writeFileSync(path.join(dir, 'warden.config.json'), JSON.stringify(raw));
  const parsed = parseConfig(raw, path.join(dir, 'warden.config.json'));
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden(parsed.value, { env: {} });
  if (!started.ok) throw started.error;
  running = started.warden;
  const api = running.listeners.get<HttpToolsApi>('HTTP tools API')!;
  return { base: api.url!, audit: new AuditLog(running.store.db) };
}

const invoke = (base: string, body: unknown, token?: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/tools/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers }, body: JSON.stringify(body) });

describe('the HTTP tools API', () => {
  it('answers 401 without a valid token, whatever the route', async () => {
    const { base, audit } = await start();
    for (const res of [await invoke(base, { tool: 'read', args: { path: 'notes.md' } }), await invoke(base, { tool: 'read' }, 'wrong-token-0123456789'), await fetch(`${base}/tools`)]) {
      expect(res.status).toBe(401);
      expect((await res.json()).error).toBe('unauthorized');
    }
    expect(await audit.list({ typePrefix: 'http.auth.failed' })).toHaveLength(3);
  }, 30_000);

  it('refuses a default-denied tool with 403 naming the deny list, and runs an allowed one through the chain', async () => {
    const { base, audit } = await start();
    for (const tool of ['exec', 'process', 'write', 'edit', 'apply_patch', 'sessions_spawn', 'sessions_send', 'cron', 'automations', 'gateway', 'nodes', 'bash']) {
      const res = await invoke(base, { tool, args: {} }, TOKEN);
      const body = await res.json();
      // Owner-only tools do not exist for an HTTP caller (never an owner): 404, as for a name that names nothing.
      if (['cron', 'automations', 'gateway', 'nodes'].includes(tool)) {
        expect(res.status, tool).toBe(404);
        expect(body).toEqual({ error: 'not_found', tool, why: `unknown tool "${tool}"` });
        continue;
      }
      expect(res.status, tool).toBe(403);
      expect(body.error).toBe('forbidden');
      // apply_patch needs a model; the rest are named as the deny list's.
      if (tool === 'apply_patch') expect(body.why).toContain('removed by');
      else expect(body.why).toMatch(/removed by gateway\.http default deny.*DEFAULT_GATEWAY_HTTP_TOOL_DENY.*gateway\.http\.tools\.allow/);
    }
    const ok = await invoke(base, { tool: 'read', args: { path: 'notes.md' } }, CI_TOKEN);
    expect(ok.status).toBe(200);
    const body = await ok.json();
    expect(body.ok).toBe(true);
    expect(JSON.stringify(body.result.content)).toContain('hello from the workspace');
    const calls = await audit.list({ typePrefix: 'http.tools.invoke' });
    expect(calls.at(-1)).toMatchObject({ actor: 'http:ci', data: { tool: 'read', status: 200 } });
    expect(calls.filter((c) => c.actor === 'http:default')).toHaveLength(12);
  }, 30_000);

  it('lists the surface: the policy for provider http minus the deny list', async () => {
    const { base } = await start();
    const res = await fetch(`${base}/tools`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const body = await res.json();
    expect(body.tools).toContain('read');
    expect(body.tools).not.toContain('exec');
    expect(body.removed).toContainEqual({ tool: 'exec', by: 'gateway.http default deny' });
    // `warden tools --provider http` answers the same surface, from the same two functions.
    const out: string[] = [];
    const code = await main(['tools', '--config', path.join(lastDir, 'warden.config.json'), '--provider', 'http', '--chat', 'channel', '--channel', 'http:default', '--sender', 'token:default', '--json'], { stdout: (t) => out.push(t), stderr: () => {}, cwd: lastDir, env: {} });
    expect(code).toBe(0);
    expect(JSON.parse(out.join('')).tools).toEqual(body.tools);
    // An own listener: not even a browser allowed onto private networks reaches it.
    const open = parseConfig({ browser: { ssrfPolicy: { allowPrivateNetwork: true } } });
    if (!open.ok) throw open.error;
    const verdict = await checkUrl(open.value.config, `${base}/tools`, { surface: 'browser' });
    expect(verdict.allowed).toBe(false);
    expect(JSON.stringify(verdict)).toContain('HTTP tools API');
  }, 30_000);

  it('re-enables a listed tool only through gateway.http.tools.allow', async () => {
    const { base } = await start({ http: { enabled: true, port: 0, token: TOKEN, tools: { allow: ['write'] } } });
    const body = await (await fetch(`${base}/tools`, { headers: { authorization: `Bearer ${TOKEN}` } })).json();
    expect(body.tools).toContain('write');
    expect(body.tools).not.toContain('edit');
    expect(body.tools).not.toContain('exec');
  }, 30_000);

  it('refuses pages, foreign session keys and bad bodies; limits each token', async () => {
    const { base } = await start({ http: { enabled: true, port: 0, token: TOKEN, tokens: { ci: CI_TOKEN }, rateLimit: { perMinute: 3 } } });
    expect((await invoke(base, { tool: 'read', args: { path: 'notes.md' } }, TOKEN, { origin: 'http://evil.example' })).status).toBe(403);
    const foreign = await invoke(base, { tool: 'read', args: { path: 'notes.md' }, sessionKey: 'agent:main:discord:channel:1' }, TOKEN);
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).why).toContain('agent:main:http:default');
    expect((await invoke(base, { args: {} }, TOKEN)).status).toBe(400);
    expect((await invoke(base, { tool: 'read', args: { path: 'notes.md' } }, TOKEN)).status).toBe(200);
    const limited = await invoke(base, { tool: 'read', args: { path: 'notes.md' } }, TOKEN);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await invoke(base, { tool: 'read', args: { path: 'notes.md' } }, CI_TOKEN)).status).toBe(200);
  }, 30_000);
});

describe('warden audit on the HTTP tools API', () => {
  const cfg = (http: Record<string, unknown>) => {
    const r = parseConfig({ gateway: { http: { enabled: true, token: TOKEN, ...http } } });
    if (!r.ok) throw r.error;
    return r.value.config;
  };
  it.each([
    ['loopback, nothing re-enabled', {}, []],
    ['loopback, exec re-enabled', { tools: { allow: ['exec'] } }, [['gateway.http.dangerous-allow', 'warn']]],
    ['all interfaces, exec re-enabled', { host: '0.0.0.0', tools: { allow: ['exec'] } }, [['gateway.http.dangerous-allow', 'critical'], ['gateway.http.bind', 'warn']]],
    ['all interfaces, an OpenClaw name re-enabled', { host: '0.0.0.0', tools: { allow: ['sessions_spawn'] } }, [['gateway.http.dangerous-allow', 'critical'], ['gateway.http.bind', 'warn']]],
    ['a LAN address, nothing re-enabled', { host: '192.168.1.5' }, [['gateway.http.bind', 'warn']]],
  ])('%s', (_what, http, expected) => {
    expect(auditGatewayHttp(cfg(http)).map((f) => [f.id, f.severity])).toEqual(expected);
  });
});
