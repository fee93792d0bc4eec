import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { understandAttachments } from '../../src/media-understanding/index.js';
import { createWebSearchTool } from '../../src/tools/core/web/web-search.js';
import type { ProviderFinding } from '../../src/tools/core/web/search/types.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';
import { TtlCache } from '../../src/util/ttl-cache.js';

/**
 * Attack class: turning an operator-configured API endpoint (a search provider, a media
 * model) into an SSRF. The model controls only the query or the attachment; a hostile or
 * compromised provider controls its answers (redirects, DNS). Neither may move a request to
 * another host, a private address of a hosted provider, or cloud metadata.
 */
let evil: Server;
let port: number;
const seen: string[] = [];
beforeAll(async () => {
  evil = createServer((req, res) => {
    seen.push(`${req.headers.host}${req.url}`);
    // A provider that answers with a redirect to somewhere else.
    res.writeHead(307, { location: req.url?.includes('meta') ? 'http://169.254.169.254/latest/' : `http://other.test:${port}/loot` }).end();
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
  port = (evil.address() as AddressInfo).port;
});
afterAll(async () => {
  evil.closeAllConnections();
  await new Promise<void>((r) => evil.close(() => r()));
});

const PUBLIC = '93.184.215.14';
const net = {
  resolve: async (host: string) => {
    if (host === 'api.tavily.test' || host === 'other.test') return [{ address: PUBLIC, family: 4 as const }];
    if (host === 'rebinding.test') return [{ address: '10.0.0.9', family: 4 as const }];
    throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
  },
  dial: (a: string) => (a === PUBLIC ? '127.0.0.1' : a),
};
const ctx = { signal: new AbortController().signal, log: pino({ level: 'silent' }) } as unknown as ToolCallContext;

async function search(searchConfig: unknown, query: string) {
  const r = parseConfig({ tools: { web: { search: searchConfig } } });
  if (!r.ok) throw r.error;
  const result = (await createWebSearchTool(r.value.config, { TAVILY_API_KEY: 'k' }, { ...net, cache: new TtlCache<ProviderFinding>() }).execute({ query }, ctx)) as ToolResult;
  return (result.content[0] as { text: string }).text;
}

describe('web search provider requests stay on the provider host', () => {
  it('a redirect to another host is refused', async () => {
    seen.splice(0);
    const text = await search({ provider: 'tavily', baseUrl: `http://api.tavily.test:${port}` }, 'q');
    expect(text).toMatch(/not reachable under the network policy .*not in hostnameAllowlist/);
    expect(seen.some((s) => s.startsWith('other.test'))).toBe(false);
  });

  it('a self-hosted endpoint redirecting to cloud metadata is refused', async () => {
    const text = await search({ provider: 'searxng', baseUrl: `http://127.0.0.1:${port}/meta` }, 'q');
    expect(text).toMatch(/cloud metadata|not in hostnameAllowlist/);
  });

  it('a hosted provider whose name resolves to a private address is refused', async () => {
    const text = await search({ provider: 'tavily', baseUrl: 'http://rebinding.test' }, 'q');
    expect(text).toMatch(/resolves to blocked address 10\.0\.0\.9/);
  });

  it.each(['@other.test/x', '../../other', 'http://other.test/', '#frag', '\r\nHost: other.test'])('the query %j cannot change the host', async (query) => {
    seen.splice(0);
    await search({ provider: 'tavily', baseUrl: `http://api.tavily.test:${port}` }, query);
    expect(seen.every((s) => s.startsWith('api.tavily.test'))).toBe(true);
  });
});

describe('media provider requests follow the same rule', () => {
  it('a media endpoint that redirects elsewhere is refused', async () => {
    const r = parseConfig({ tools: { media: { models: [{ provider: 'openai', model: 'm', capabilities: ['audio'], baseUrl: `http://api.tavily.test:${port}/v1` }] } } });
    if (!r.ok) throw r.error;
    const [outcome] = await understandAttachments([{ contentType: 'audio/ogg', data: Buffer.concat([Buffer.from('OggS'), Buffer.alloc(2000)]) }], {
      config: r.value.config,
      turn: { agentId: 'main', provider: 'web', chat: 'dm', senderIsOwner: false, spawnDepth: 0 },
      sessionKey: 's',
      workspaceDir: '/nonexistent',
      env: { OPENAI_API_KEY: 'k' },
      net,
      cache: new TtlCache<string>(),
      log: pino({ level: 'silent' }),
    });
    expect(outcome).toMatchObject({ status: 'failed', attempts: [{ error: expect.stringMatching(/not reachable under the network policy/) }] });
  });
});
