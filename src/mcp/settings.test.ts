import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { mcpChildEnv } from './env.js';
import { describeLaunch, redactArgs, serverSettings } from './settings.js';

const settings = (servers: Record<string, unknown>) => {
  const r = parseConfig({ mcp: { servers } });
  if (!r.ok) throw r.error;
  return serverSettings(r.value.config, '/srv/warden');
};

describe('mcp.servers resolved', () => {
  it('stdio and HTTP servers with their defaults', () => {
    const [gh, api] = settings({ gh: { command: 'gh-mcp', cwd: 'tools' }, api: { url: 'http://127.0.0.1:9000/mcp', timeoutSec: 5 } });
    expect(gh).toMatchObject({ safeName: 'gh', enabled: true, timeoutMs: 60_000, connectTimeoutMs: 30_000, maxTools: 1000, parallel: false, launch: { kind: 'stdio', cwd: '/srv/warden/tools' } });
    // A loopback URL may reach loopback; a public one may not reach private addresses unless allowed.
    expect(api).toMatchObject({ timeoutMs: 5000, launch: { kind: 'http', allowPrivateNetwork: true } });
    expect(settings({ api: { url: 'https://mcp.example.com/x' } })[0]!.launch).toMatchObject({ allowPrivateNetwork: false });
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['neither command nor url', {}, /exactly one of command \(stdio\) or url/],
    ['both', { command: 'x', url: 'http://a/' }, /exactly one of command/],
    ['headers on stdio', { command: 'x', headers: { A: 'b' } }, /headers applies to HTTP servers/],
    ['env on HTTP', { url: 'http://a/', env: { A: 'b' } }, /env applies to stdio servers/],
    ['a non-http URL', { url: 'file:///etc/passwd' }, /http:\/\/ or https:\/\/ URL/],
    ['a bad variable name', { command: 'x', env: { 'A-B': '1' } }, /mcp.servers.s.env.A-B: Invalid key/],
  ])('refused: %s', (_what, server, message) => {
    const r = parseConfig({ mcp: { servers: { s: server } } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(message);
  });

  it('per-tool approval beats the server\'s, which beats auto', () => {
    const [s] = settings({ s: { command: 'x', approval: 'always', tools: { read: { approval: 'never' } } } });
    expect(s!.approval('read')).toEqual({ mode: 'never', source: 'mcp.servers.s.tools.read.approval' });
    expect(s!.approval('write')).toEqual({ mode: 'always', source: 'mcp.servers.s.approval' });
  });

  it('what logs and `warden mcp list` show hides credentials', () => {
    expect(redactArgs(['--token', 'abc', '--api-key=xyz', 'ghp_0123456789abcdef', '--verbose'])).toEqual(['--token', '[redacted]', '--api-key=[redacted]', '[redacted]', '--verbose']);
    expect(describeLaunch({ kind: 'http', url: 'https://mcp.example.com/x?key=secret', headers: { Authorization: 'Bearer s' }, allowPrivateNetwork: false })).toBe('http https://mcp.example.com/x (headers: Authorization)');
  });

  it('a stdio child gets the base variables and the configured ones, nothing else of Warden\'s environment', () => {
    const env = mcpChildEnv({ PATH: '/bin', HOME: '/h', LC_ALL: 'C', DISCORD_TOKEN: 't', AWS_SECRET_ACCESS_KEY: 'k', BASH_FUNC_x: '() { :; }' }, { GITHUB_TOKEN: 'g' });
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', LC_ALL: 'C', GITHUB_TOKEN: 'g' });
  });
});
