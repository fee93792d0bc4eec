import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discordConfig, slackConfig } from '../../src/config/schema/channels.js';
import { opsConfig } from '../../src/config/schema/ops.js';
import { discordPlatformChecks, runningShardsCheck, slackPlatformChecks } from '../../src/cli/platform-check.js';

/**
 * Attack class: the platform tokens `warden doctor` sends leaving for somewhere else. Doctor
 * asks the configured API with the bot and app tokens; an answer that redirects (a captive
 * portal, a compromised proxy, a spoofed API) must not carry a token to the redirect's target,
 * on any method doctor calls and any redirect status. The running-instance check carries no token.
 */
const seen: Array<{ host: string | undefined; url: string | undefined; auth: string | undefined }> = [];
let api: Server;
let elsewhere: Server;
let apiUrl: string;
let elsewhereUrl: string;
let status = 302;

beforeAll(async () => {
  elsewhere = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push({ host: req.headers.host, url: req.url, auth: req.headers.authorization });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"id":"1","username":"x","bot":true,"flags":0,"shards":1}');
  });
  api = createServer((req, res) => void res.writeHead(status, { location: `${elsewhereUrl}${req.url}` }).end());
  await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of [api, elsewhere]) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

describe('doctor sends platform tokens to the configured API only', () => {
  it.each([301, 302, 303, 307, 308])('a %i from the Discord or Slack API is not followed, and nothing passes', async (code) => {
    status = code;
    seen.length = 0;
    const discord = await discordPlatformChecks(discordConfig.parse({ token: 'SECRET-DISCORD', apiBaseUrl: `${apiUrl}/api` }), { timeoutMs: 2_000 });
    const slack = await slackPlatformChecks(slackConfig.parse({ botToken: 'xoxb-SECRET', appToken: 'xapp-SECRET', apiUrl: `${apiUrl}/api/` }), { timeoutMs: 2_000 });
    expect(seen).toEqual([]);
    // Doctor says it could not check, rather than reporting a redirect target's answer as the platform's.
    expect(discord).toEqual([expect.objectContaining({ name: 'discord token', ok: true, warn: true, detail: expect.stringContaining(`HTTP ${code}`) })]);
    expect(slack).toEqual([expect.objectContaining({ name: 'slack token', ok: true, warn: true })]);
  });

  it('asks the running instance on loopback without any token', async () => {
    seen.length = 0;
    const port = Number(new URL(elsewhereUrl).port);
    await runningShardsCheck(discordConfig.parse({ token: 'SECRET-DISCORD', shards: 2 }), opsConfig.parse({ port }));
    expect(seen).toEqual([{ host: `127.0.0.1:${port}`, url: '/readyz', auth: undefined }]);
  });
});
