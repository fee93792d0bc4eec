import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { isValidSlackRequest } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { signatureProblem, signedOnly, signingKey, SLACK_MAX_REQUEST_AGE_S } from './signature.js';

const SECRET = 'signing-secret-for-tests';
const NOW_MS = 1_800_000_000_000;
const NOW_S = NOW_MS / 1000;
const BODY = '{"type":"event_callback","event_id":"Ev1"}';
const sign = (ts: string | number, body: string, secret = SECRET) => `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;

describe('signatureProblem', () => {
  const good = sign(NOW_S, BODY);
  const cases: { name: string; headers: IncomingMessage['headers']; body?: string; ok: boolean }[] = [
    { name: 'a request signed now', headers: { 'x-slack-signature': good, 'x-slack-request-timestamp': String(NOW_S) }, ok: true },
    { name: 'one signed five minutes ago', headers: { 'x-slack-signature': sign(NOW_S - SLACK_MAX_REQUEST_AGE_S, BODY), 'x-slack-request-timestamp': String(NOW_S - SLACK_MAX_REQUEST_AGE_S) }, ok: true },
    { name: 'one signed a second too long ago', headers: { 'x-slack-signature': sign(NOW_S - SLACK_MAX_REQUEST_AGE_S - 1, BODY), 'x-slack-request-timestamp': String(NOW_S - SLACK_MAX_REQUEST_AGE_S - 1) }, ok: false },
    { name: 'a timestamp read as the number it is (leading zero)', headers: { 'x-slack-signature': sign(NOW_S, BODY), 'x-slack-request-timestamp': `0${NOW_S}` }, ok: true },
    { name: 'a signature over the timestamp as sent, not as read', headers: { 'x-slack-signature': sign(`0${NOW_S}`, BODY), 'x-slack-request-timestamp': `0${NOW_S}` }, ok: false },
    { name: 'another secret', headers: { 'x-slack-signature': sign(NOW_S, BODY, 'other'), 'x-slack-request-timestamp': String(NOW_S) }, ok: false },
    { name: 'a changed body', headers: { 'x-slack-signature': good, 'x-slack-request-timestamp': String(NOW_S) }, body: `${BODY} `, ok: false },
    { name: 'a changed timestamp', headers: { 'x-slack-signature': good, 'x-slack-request-timestamp': String(NOW_S + 1) }, ok: false },
    { name: 'no signature', headers: { 'x-slack-request-timestamp': String(NOW_S) }, ok: false },
    { name: 'no timestamp', headers: { 'x-slack-signature': good }, ok: false },
    { name: 'a timestamp that is no number', headers: { 'x-slack-signature': good, 'x-slack-request-timestamp': 'soon' }, ok: false },
    { name: 'an empty timestamp (read as 0: stale)', headers: { 'x-slack-signature': sign(0, BODY), 'x-slack-request-timestamp': '' }, ok: false },
    { name: 'another signature version', headers: { 'x-slack-signature': good.replace('v0=', 'v1='), 'x-slack-request-timestamp': String(NOW_S) }, ok: false },
    { name: 'a version and no digest', headers: { 'x-slack-signature': 'v0=', 'x-slack-request-timestamp': String(NOW_S) }, ok: false },
    { name: 'a version alone', headers: { 'x-slack-signature': 'v0', 'x-slack-request-timestamp': String(NOW_S) }, ok: false },
    { name: 'a digest cut short', headers: { 'x-slack-signature': good.slice(0, -1), 'x-slack-request-timestamp': String(NOW_S) }, ok: false },
    { name: 'a digest made longer', headers: { 'x-slack-signature': `${good}0`, 'x-slack-request-timestamp': String(NOW_S) }, ok: false },
    { name: 'a digest in capitals', headers: { 'x-slack-signature': `v0=${good.slice(3).toUpperCase()}`, 'x-slack-request-timestamp': String(NOW_S) }, ok: false },
    { name: 'a digest with a non-ASCII character of the same length in characters', headers: { 'x-slack-signature': `${good.slice(0, -1)}é`, 'x-slack-request-timestamp': String(NOW_S) }, ok: false },
    { name: 'the signature header twice', headers: { 'x-slack-signature': [good, good] as unknown as string, 'x-slack-request-timestamp': String(NOW_S) }, ok: false },
    // Node's parser joins a repeated header it does not know with ", " into one string.
    { name: 'the signature header twice, as Node joins it', headers: { 'x-slack-signature': `${good}, ${good}`, 'x-slack-request-timestamp': String(NOW_S) }, ok: false },
    { name: 'the timestamp header twice, as Node joins it', headers: { 'x-slack-signature': good, 'x-slack-request-timestamp': `${NOW_S}, ${NOW_S}` }, ok: false },
    { name: 'the timestamp twice, the signature over the joined text', headers: { 'x-slack-signature': sign(`${NOW_S}, ${NOW_S}`, BODY), 'x-slack-request-timestamp': `${NOW_S}, ${NOW_S}` }, ok: false },
  ];

  it.each(cases)('$name: accepted $ok, as Bolt decides it', ({ headers, body = BODY, ok }) => {
    expect(signatureProblem(signingKey(SECRET), headers, body, NOW_MS) === undefined).toBe(ok);
    // Bolt's own check (verifySlackRequest) on the same request gives the same answer.
    const bolt = isValidSlackRequest({
      signingSecret: SECRET,
      body,
      headers: { 'x-slack-signature': headers['x-slack-signature'] as string, 'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']) },
      nowMilliseconds: NOW_MS,
    });
    // Bolt's receiver refuses a missing or repeated header before its check runs (getHeader).
    const boltReceiver = typeof headers['x-slack-signature'] === 'string' && typeof headers['x-slack-request-timestamp'] === 'string' && bolt;
    expect(boltReceiver).toBe(ok);
  });

  it('refuses to be built without a secret', () => {
    expect(() => signingKey('')).toThrow(/signing secret/);
  });
});

describe('signedOnly', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  /** A server whose inner listener records what reaches it (the request's buffered body) and answers 200. */
  async function serve() {
    const reached: { method: string; body: string | undefined }[] = [];
    const warnings: string[] = [];
    const inner = (req: IncomingMessage & { rawBody?: Buffer }, res: import('node:http').ServerResponse) => {
      reached.push({ method: req.method!, body: req.rawBody?.toString() });
      res.writeHead(200).end();
    };
    server = createServer(signedOnly(inner, SECRET, { warn: (...msg: unknown[]) => void warnings.push(msg.join(' ')) }, () => NOW_MS));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const post = (body: string, headers: Record<string, string>) => fetch(`${base}/slack/events`, { method: 'POST', headers, body });
    return { reached, warnings, base, post };
  }

  it('hands on a signed POST with its body read once', async () => {
    const { reached, post } = await serve();
    const res = await post(BODY, { 'content-type': 'application/json', 'x-slack-signature': sign(NOW_S, BODY), 'x-slack-request-timestamp': String(NOW_S) });
    expect(res.status).toBe(200);
    expect(reached).toEqual([{ method: 'POST', body: BODY }]);
  });

  it('answers 401 to a forged POST, which never reaches the receiver', async () => {
    const { reached, warnings, post } = await serve();
    const res = await post(BODY, { 'content-type': 'application/json', 'x-slack-signature': sign(NOW_S, BODY, 'guess'), 'x-slack-request-timestamp': String(NOW_S) });
    expect(res.status).toBe(401);
    expect(reached).toEqual([]);
    expect(warnings.join('\n')).toMatch(/signature mismatch/);
  });

  it("passes Slack's unsigned ssl_check with nothing else of its body", async () => {
    const { reached, post } = await serve();
    const smuggled = `ssl_check=1&payload=${encodeURIComponent(JSON.stringify({ type: 'block_actions', actions: [{ action_id: 'warden_approval_allow-once' }] }))}`;
    const res = await post(smuggled, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(200);
    expect(reached).toEqual([{ method: 'POST', body: 'ssl_check=1' }]);
  });

  it('checks an unsigned form that is not an ssl_check', async () => {
    const { reached, post } = await serve();
    const res = await post('ssl_check=0&command=%2Fwarden', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(401);
    expect(reached).toEqual([]);
  });

  it('answers 401 to a POST that repeats the signature header on the wire (Node joins the two)', async () => {
    const { reached, base } = await serve();
    const good = sign(NOW_S, BODY);
    const { port } = new URL(base);
    const head = [`POST /slack/events HTTP/1.1`, `Host: 127.0.0.1`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(BODY)}`, `X-Slack-Request-Timestamp: ${NOW_S}`, `X-Slack-Signature: ${good}`, `X-Slack-Signature: ${good}`, 'Connection: close'];
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.end(`${head.join('\r\n')}\r\n\r\n${BODY}`));
      let text = '';
      socket.on('data', (d: Buffer) => (text += String(d)));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(reached).toEqual([]);
  });

  it('leaves other methods to the receiver, unread', async () => {
    const { reached, base } = await serve();
    const res = await fetch(`${base}/slack/events`);
    expect(res.status).toBe(200);
    expect(reached).toEqual([{ method: 'GET', body: undefined }]);
  });
});
