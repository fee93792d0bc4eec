// The bot token on Slack file downloads, attacked as a crafted event would: a message's `files`
// carries URLs, and whatever host they name, the token (an Authorization header) may go only to
// Slack's file host, over https; a redirect off it is refused before anything is sent there.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboundFromSlack, SLACK_FILE_HOSTS, slackAttachment, type SlackFile } from '../../adapters/slack/inbound.js';
import { attachmentsFrom, decodeForwarded } from '../../src/gateway/forwarded.js';

const TOKEN = 'xoxb-secret-token';
let fileHost: Server;
let elsewhere: Server;
let hostAddr = '';
let elsewhereAddr = '';
const seenElsewhere: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  elsewhere = createServer((req, res) => {
    seenElsewhere.push(req.headers);
    res.end('stolen');
  });
  await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
  elsewhereAddr = `127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
  fileHost = createServer((req, res) => {
    if (req.url === '/redirect-out') res.writeHead(302, { location: `http://${elsewhereAddr}/catch` }).end();
    else if (req.url === '/redirect-in') res.writeHead(302, { location: '/ok' }).end();
    else res.end(req.headers.authorization === `Bearer ${TOKEN}` ? 'the file' : 'no token');
  });
  await new Promise<void>((r) => fileHost.listen(0, '127.0.0.1', r));
  hostAddr = `127.0.0.1:${(fileHost.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await Promise.all([new Promise((r) => fileHost.close(r)), new Promise((r) => elsewhere.close(r))]);
});

async function download(file: Partial<SlackFile>) {
  const inbound = inboundFromSlack(
    { type: 'message', subtype: 'file_share', channel: 'D1', channel_type: 'im', user: 'U1', text: '', ts: '1.000001', files: [{ id: 'F1', name: 'a.txt', ...file }] },
    { files: { token: TOKEN, hosts: [...SLACK_FILE_HOSTS, hostAddr] } },
  );
  const got = await inbound!.attachments![0]!.download(1024);
  return got.ok ? `fetched: ${got.data.toString()}` : got.error;
}

describe('the bot token goes only to Slack\'s file host', () => {
  const cases: Array<[string, () => Partial<SlackFile>, RegExp]> = [
    ['the file host itself (url_private_download first)', () => ({ url_private: `http://${elsewhereAddr}/x`, url_private_download: `http://${hostAddr}/ok` }), /^fetched: the file$/],
    ['url_private when there is no download URL', () => ({ url_private: `http://${hostAddr}/ok` }), /^fetched: the file$/],
    ['another host on loopback', () => ({ url_private: `http://${elsewhereAddr}/x` }), /not the platform's file host/],
    ['a lookalike of files.slack.com', () => ({ url_private: 'https://files.slack.com.attacker.test/x' }), /not the platform's file host/],
    ['a subdomain host that is not the file host', () => ({ url_private: 'https://attacker.files.slack.com/x' }), /not the platform's file host/],
    ['slack.com itself', () => ({ url_private: 'https://slack.com/x' }), /not the platform's file host/],
    ['userinfo before the real host', () => ({ url_private: 'https://files.slack.com@attacker.test/x' }), /not the platform's file host/],
    ['credentials in the URL to the real host', () => ({ url_private: `https://user:pw@files.slack.com/x` }), /not the platform's file host/],
    ['plain http to the real host', () => ({ url_private: 'http://files.slack.com/x' }), /not the platform's file host/],
    ['cloud metadata', () => ({ url_private: 'http://169.254.169.254/latest/meta-data/' }), /not the platform's file host/],
    ['a redirect off the file host', () => ({ url_private: `http://${hostAddr}/redirect-out` }), /redirect/i],
    ['even a redirect within the file host', () => ({ url_private: `http://${hostAddr}/redirect-in` }), /redirect/i],
    ['no URL at all (a file hidden by the plan limit)', () => ({ file_access: 'hidden_by_limit' }), /no URL for it \(hidden_by_limit\)/],
    ['not a URL', () => ({ url_private: 'file:///etc/passwd' }), /not the platform's file host/],
  ];
  it.each(cases)('%s', async (_name, file, expected) => {
    expect(await download(file())).toMatch(expected);
    expect(seenElsewhere).toEqual([]);
  });

  // A message another instance recorded on the shared store (or a row someone wrote there): the
  // instance that runs it fetches the recorded URL through the same adapter path, so the URL is
  // data there too and never chooses where the token goes.
  it.each(cases.filter(([, file]) => (file().url_private_download ?? file().url_private) !== undefined))('recorded for another instance: %s', async (_name, file, expected) => {
    const url = file().url_private_download ?? file().url_private;
    const payload = JSON.stringify({
      v: 1,
      route: { agentId: 'main', sessionKey: 'agent:main:slack:direct:u1', text: '', context: {}, replyTo: { provider: 'slack', channelId: 'D1' }, files: [{ id: 'F1', name: 'a.txt', url }] },
    });
    const decoded = decodeForwarded(payload);
    if (!decoded.ok) throw new Error(decoded.error);
    const [attachment] = attachmentsFrom(decoded.files, 'slack', { attachmentFrom: (ref) => slackAttachment(ref, { token: TOKEN, hosts: [...SLACK_FILE_HOSTS, hostAddr] }) });
    const got = await attachment!.download(1024);
    expect(got.ok ? `fetched: ${got.data.toString()}` : got.error).toMatch(expected);
    expect(seenElsewhere).toEqual([]);
  });

  it('a download larger than the limit stops at the limit', async () => {
    const big = createServer((_req, res) => res.end(Buffer.alloc(4096)));
    await new Promise<void>((r) => big.listen(0, '127.0.0.1', r));
    const addr = `127.0.0.1:${(big.address() as AddressInfo).port}`;
    try {
      const inbound = inboundFromSlack(
        { type: 'message', channel: 'D1', channel_type: 'im', user: 'U1', ts: '1.000002', files: [{ id: 'F2', url_private: `http://${addr}/big` }] },
        { files: { token: TOKEN, hosts: [addr] } },
      );
      const got = await inbound!.attachments![0]!.download(1024);
      expect(got.ok ? 'fetched' : got.error).toMatch(/larger than 1024 bytes/);
    } finally {
      big.close();
    }
  });
});
