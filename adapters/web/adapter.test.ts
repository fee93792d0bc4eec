import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { ApprovalRequest } from '../../src/approvals/types.js';
import type { ApprovalClick, ClickOutcome, InboundMessage } from '../../src/gateway/types.js';
import { createWebAdapter, type ServerFrame, type WebAdapter } from './adapter.js';
import type { WebHistory } from './history.js';

const started: WebAdapter[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((a) => a.stop()));
});

function pending(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    id: 'ap-1',
    kind: 'exec',
    tool: 'exec',
    title: 'Run a command',
    preview: 'rm -rf build',
    fullText: 'rm -rf build',
    agentId: 'main',
    sessionKey: 'agent:main:web:direct:local',
    provider: 'web',
    channelId: 'web',
    requesterId: 'local',
    facts: [{ label: 'Why', value: 'not on the allowlist' }],
    allowedDecisions: ['allow-once', 'deny'],
    createdAt: Date.now(),
    expiresAt: Date.now() + 60_000,
    status: 'pending',
    ...over,
  };
}

const TOKEN = 'per-install-token-0123456789abcdef0123456789';
/** What a tab that opened the printed address sends from then on. */
const AUTH = { cookie: `warden_token=${TOKEN}` };

async function start(
  options: { token?: string; click?: (c: ApprovalClick) => Promise<ClickOutcome>; history?: WebHistory; pendingApprovals?: () => Promise<ApprovalRequest[]> } = {},
) {
  const clicks: ApprovalClick[] = [];
  const inbound: InboundMessage[] = [];
  const token = options.token ?? TOKEN;
  const adapter = createWebAdapter(
    { host: '127.0.0.1', port: 0, token: options.token },
    {
      token,
      onApprovalClick: async (click) => {
        clicks.push(click);
        return options.click ? options.click(click) : { kind: 'not-found' };
      },
      history: options.history,
      pendingApprovals: options.pendingApprovals,
    },
  );
  await adapter.start(async (m) => {
    inbound.push(m);
  });
  started.push(adapter);
  return { adapter, clicks, inbound, base: adapter.url! };
}

/** Opens a WebSocket to `url` (http form) with no headers of its own. */
function openSocket(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** A WebSocket client that keeps every frame and can wait for one. */
async function connect(base: string, headers: Record<string, string> = AUTH) {
  const frames: ServerFrame[] = [];
  const waiters: Array<() => void> = [];
  const ws = new WebSocket(`${base.replace('http', 'ws')}ws`, { headers });
  ws.on('message', (raw) => {
    frames.push(JSON.parse(raw.toString()) as ServerFrame);
    for (const w of waiters.splice(0)) w();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const waitFor = async (pred: (f: ServerFrame) => boolean): Promise<ServerFrame> => {
    for (;;) {
      const hit = frames.find(pred);
      if (hit) return hit;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return { ws, frames, waitFor, send: (frame: object) => ws.send(JSON.stringify(frame)) };
}

describe('web chat adapter', () => {
  it('refuses to bind beyond loopback without a token', () => {
    expect(() => createWebAdapter({ host: '0.0.0.0', port: 0, token: undefined }, { token: TOKEN, onApprovalClick: async () => ({ kind: 'not-found' }) })).toThrow(
      /channels\.web\.token/,
    );
  });

  it('serves the page with a strict content security policy', async () => {
    const { base } = await start();
    const res = await fetch(base, { headers: AUTH });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await res.text()).toContain('<form id="composer"');
    expect((await fetch(`${base}app.js`, { headers: AUTH })).status).toBe(200);
    expect((await fetch(`${base}nope`, { headers: AUTH })).status).toBe(404);
  });

  it('refuses requests from other origins and rebinding host names', async () => {
    const { base } = await start();
    expect((await fetch(base, { headers: { ...AUTH, origin: 'https://evil.example' } })).status).toBe(403);
    const port = Number(new URL(base).port);
    // fetch may not set Host; a raw request can, as a rebinding page's would arrive.
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/', headers: { ...AUTH, host: `evil.example:${port}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject);
    });
    expect(status).toBe(403);
    await expect(connect(base, { ...AUTH, origin: 'https://evil.example' })).rejects.toThrow(/403/);
  });

  it('requires the token on every route, on loopback too, and opens no WebSocket without it', async () => {
    const { base, inbound } = await start();
    for (const route of ['', 'app.js', 'app.css', 'healthz', 'ws', 'nope', '?token=wrong', 'app.js?token=']) {
      const res = await fetch(`${base}${route}`);
      expect(res.status, route).toBe(401);
      expect(await res.text(), route).not.toContain(TOKEN);
    }
    for (const method of ['POST', 'PUT', 'DELETE']) expect((await fetch(base, { method })).status, method).toBe(401);
    for (const headers of [{}, { cookie: 'warden_token=wrong' }, { cookie: `warden_token=${TOKEN.slice(0, -1)}` }, { authorization: 'Bearer wrong' }, { cookie: `other=${TOKEN}` }] as Array<Record<string, string>>) {
      expect((await fetch(base, { headers })).status, JSON.stringify(headers)).toBe(401);
      await expect(connect(base, headers), JSON.stringify(headers)).rejects.toThrow(/403/);
    }
    await expect(openSocket(`${base}ws?token=wrong`)).rejects.toThrow(/403/);
    expect(inbound).toEqual([]);
  });

  it('accepts the token as a cookie, a bearer header or once in the query, which becomes the cookie', async () => {
    const { base, adapter } = await start();
    expect(adapter.openUrl).toBe(`${base}?token=${TOKEN}`);
    const res = await fetch(adapter.openUrl!, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    expect(res.headers.get('set-cookie')).toBe(`warden_token=${TOKEN}; HttpOnly; SameSite=Strict; Path=/`);
    expect((await fetch(base, { headers: AUTH })).status).toBe(200);
    expect((await fetch(`${base}healthz`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    (await connect(base, AUTH)).ws.close();
    (await openSocket(`${base}ws?token=${TOKEN}`)).close();
  });

  it('with a configured token, refuses requests without it and moves a query token into a cookie', async () => {
    const { base } = await start({ token: 'letmein' });
    expect((await fetch(base)).status).toBe(401);
    await expect(connect(base, {})).rejects.toThrow(/403/);
    await expect(connect(base, AUTH)).rejects.toThrow(/403/);
    const res = await fetch(`${base}?token=letmein`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^warden_token=letmein; HttpOnly; SameSite=Strict/);
    expect((await fetch(base, { headers: { cookie: 'warden_token=letmein' } })).status).toBe(200);
    const client = await connect(base, { cookie: 'warden_token=letmein' });
    client.ws.close();
  });

  it('turns a typed message into an inbound message from the local owner and broadcasts replies', async () => {
    const { adapter, base, inbound } = await start();
    const a = await connect(base);
    const b = await connect(base);
    a.send({ type: 'message', text: '  /tools  ' });
    await b.waitFor((f) => f.type === 'message' && f.message.role === 'user');
    expect(inbound).toMatchObject([{ provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'local', text: '/tools', mentionsBot: true }]);
    await adapter.send({ provider: 'web', channelId: 'web' }, { text: 'Your tools here (1): read' });
    const reply = await a.waitFor((f) => f.type === 'message' && f.message.role === 'bot');
    expect(reply).toMatchObject({ message: { text: 'Your tools here (1): read' } });

    // A new tab gets the conversation so far.
    const c = await connect(base);
    const history = await c.waitFor((f) => f.type === 'history');
    expect(history.type === 'history' && history.items.map((i) => (i.kind === 'message' ? i.message.role : 'card'))).toEqual(['user', 'bot']);
    for (const client of [a, b, c]) client.ws.close();
  });

  it('refuses an over-long message with a notice', async () => {
    const { base, inbound } = await start();
    const a = await connect(base);
    a.send({ type: 'message', text: 'x'.repeat(20_001) });
    const notice = await a.waitFor((f) => f.type === 'message' && f.message.role === 'notice');
    expect(notice.type === 'message' && notice.message.text).toMatch(/limit is 20,000/);
    expect(inbound).toEqual([]);
    a.ws.close();
  });

  it('shows approval cards with the offered buttons and passes clicks to the router', async () => {
    const resolved = pending({ status: 'allow-once', decidedBy: 'local' });
    const { adapter, base, clicks } = await start({ click: async () => ({ kind: 'resolved', request: resolved }) });
    const a = await connect(base);
    await adapter.approvals.show(pending());
    const card = await a.waitFor((f) => f.type === 'card');
    expect(card).toMatchObject({
      card: {
        id: 'ap-1',
        title: 'Exec approval required',
        fullText: 'rm -rf build',
        buttons: [
          { decision: 'allow-once', label: 'Allow once' },
          { decision: 'deny', label: 'Deny' },
        ],
      },
    });
    a.send({ type: 'approve', id: 'ap-1', decision: 'allow-once' });
    const done = await a.waitFor((f) => f.type === 'card' && f.card.status !== 'pending');
    expect(clicks).toEqual([{ approvalId: 'ap-1', decision: 'allow-once', userId: 'local', origin: { provider: 'web', channelId: 'web', dm: true } }]);
    expect(done).toMatchObject({ card: { status: 'allow-once', outcome: 'Allowed once by you' } });
    a.ws.close();
  });

  it('sends an approval\'s outcome with its card\'s id, so the page shows it under the card', async () => {
    const { adapter, base } = await start();
    const a = await connect(base);
    await adapter.approvals.show(pending({ via: 'agent', requesterId: 'local' }));
    const card = await a.waitFor((f) => f.type === 'card');
    expect(card.type === 'card' && card.card.facts).toEqual(expect.arrayContaining([{ label: 'Requested by', value: 'the agent for you' }]));
    await adapter.send({ provider: 'web', channelId: 'web' }, { text: 'Result: ok', linkedApproval: 'ap-1' });
    expect(await a.waitFor((f) => f.type === 'message' && f.message.role === 'bot')).toMatchObject({ message: { text: 'Result: ok', approvalId: 'ap-1' } });
    a.ws.close();
  });

  it('does not show cards of requests from other platforms', async () => {
    const { adapter, base } = await start();
    const a = await connect(base);
    await a.waitFor((f) => f.type === 'history');
    await adapter.approvals.show(pending({ provider: 'discord', id: 'other' }));
    await adapter.send({ provider: 'web', channelId: 'web' }, { text: 'marker' });
    await a.waitFor((f) => f.type === 'message');
    expect(a.frames.some((f) => f.type === 'card')).toBe(false);
    a.ws.close();
  });
});

/** A store stand-in: sessions by id, items per session, delivered ids. */
function memoryHistory(initial: { current?: string; items?: Record<string, Awaited<ReturnType<WebHistory['load']>>> } = {}): WebHistory & { delivered: Set<string> } {
  const delivered = new Set<string>();
  return {
    delivered,
    sessionKeyOf: (id) => `agent:main:web:direct:local${id ? `:session:${id}` : ''}`,
    currentSessionId: async () => initial.current,
    load: async (id) => initial.items?.[id ?? ''] ?? [],
    firstDelivery: async (id) => (delivered.has(id) ? false : (delivered.add(id), true)),
  };
}

describe('web chat messages that carry the page\'s id', () => {
  it('are acknowledged, run once however often they arrive, and refused visibly when too long', async () => {
    const history = memoryHistory();
    const { base, inbound } = await start({ history });
    const a = await connect(base);
    a.send({ type: 'message', id: 'msg-0001-aaaa', text: 'first' });
    a.send({ type: 'message', id: 'msg-0001-aaaa', text: 'first' });
    a.send({ type: 'message', id: 'msg-0002-bbbb', text: 'x'.repeat(20_001) });
    a.send({ type: 'message', id: 'msg-0003-cccc', text: 'second' });
    await a.waitFor((f) => f.type === 'ack' && f.id === 'msg-0003-cccc');
    const acks = a.frames.flatMap((f) => (f.type === 'ack' ? [[f.id, f.status]] : []));
    expect(acks).toEqual([
      ['msg-0001-aaaa', 'accepted'],
      ['msg-0001-aaaa', 'duplicate'],
      ['msg-0002-bbbb', 'refused'],
      ['msg-0003-cccc', 'accepted'],
    ]);
    expect(a.frames.find((f) => f.type === 'ack' && f.status === 'refused')).toMatchObject({ reason: expect.stringMatching(/limit is 20,000/) });
    expect(inbound.map((m) => [m.text, m.messageId])).toEqual([
      ['first', 'msg-0001-aaaa'],
      ['second', 'msg-0003-cccc'],
    ]);
    // Every tab sees the message with its id, so the sending tab does not show it twice.
    expect(a.frames.filter((f) => f.type === 'message' && f.message.role === 'user').map((f) => f.type === 'message' && f.message.id)).toEqual(['msg-0001-aaaa', 'msg-0003-cccc']);
    a.ws.close();
  });

  it('a malformed id is no id: the message runs, unacknowledged, as before', async () => {
    const { base, inbound } = await start({ history: memoryHistory() });
    const a = await connect(base);
    a.send({ type: 'message', id: 'x', text: 'hi' });
    a.send({ type: 'message', id: 'x', text: 'hi' });
    await a.waitFor((f) => f.type === 'message' && f.message.role === 'user' && a.frames.filter((g) => g.type === 'message').length === 2);
    expect(inbound).toHaveLength(2);
    expect(a.frames.some((f) => f.type === 'ack')).toBe(false);
    a.ws.close();
  });
});

describe('web chat sessions and history from the store', () => {
  it('opens on the store\'s current session with its history; messages carry the session', async () => {
    const history = memoryHistory({
      current: 's2',
      items: { s2: [{ kind: 'message', message: { role: 'user', text: 'from before', at: 1 } }, { kind: 'card', request: pending({ status: 'deny', decidedBy: 'web:local' }) }] },
    });
    const { base, inbound } = await start({ history });
    const a = await connect(base);
    const frame = await a.waitFor((f) => f.type === 'history');
    expect(frame).toMatchObject({
      session: 'agent:main:web:direct:local:session:s2',
      items: [{ kind: 'message', message: { text: 'from before' } }, { kind: 'card', card: { id: 'ap-1', status: 'deny', outcome: 'Denied by you' } }],
    });
    a.send({ type: 'message', id: 'msg-0004-dddd', text: 'now' });
    await a.waitFor((f) => f.type === 'ack');
    expect(inbound[0]).toMatchObject({ sessionId: 's2', text: 'now' });
    a.ws.close();
  });

  it('/new gives every tab an empty history of the fresh session; the old session\'s cards only update', async () => {
    const { adapter, base, inbound } = await start({ history: memoryHistory() });
    const a = await connect(base);
    await adapter.approvals.show(pending({ id: 'old-card' }));
    await a.waitFor((f) => f.type === 'card');
    const id = await adapter.newSession!({ provider: 'web', channelId: 'web' });
    expect(id).toMatch(/^[a-z0-9]{12,}$/);
    const fresh = await a.waitFor((f) => f.type === 'history' && f.session.endsWith(`:session:${id}`));
    expect(fresh).toMatchObject({ items: [] });
    await adapter.approvals.update(pending({ id: 'old-card', status: 'allow-once', decidedBy: 'web:local' }));
    const b = await connect(base);
    expect(await b.waitFor((f) => f.type === 'history')).toMatchObject({ items: [] });
    b.send({ type: 'message', id: 'msg-0005-eeee', text: 'in the new one' });
    await b.waitFor((f) => f.type === 'ack');
    expect(inbound.at(-1)).toMatchObject({ sessionId: id });
    a.ws.close();
    b.ws.close();
  });
});

describe('the pending panel', () => {
  it('lists the web chat\'s pending requests on connect and follows each card', async () => {
    const waiting = [pending({ id: 'p-1' }), pending({ id: 'p-discord', provider: 'discord' })];
    const { adapter, base } = await start({ pendingApprovals: async () => waiting });
    const a = await connect(base);
    const first = await a.waitFor((f) => f.type === 'pending');
    expect(first.type === 'pending' && first.cards.map((c) => c.id)).toEqual(['p-1']);

    const second = pending({ id: 'p-2', createdAt: Date.now() + 1 });
    waiting.push(second);
    await adapter.approvals.show(second);
    await a.waitFor((f) => f.type === 'pending' && f.cards.length === 2);

    // Resolved: gone from the panel even before the service's list says so.
    const before = a.frames.length;
    await adapter.approvals.update({ ...second, status: 'deny', decidedBy: 'web:local' });
    const panel = (await a.waitFor((f) => f.type === 'pending' && a.frames.indexOf(f) >= before)) as Extract<ServerFrame, { type: 'pending' }>;
    expect(panel.cards.map((c) => c.id)).toEqual(['p-1']);
    a.ws.close();
  });
});

describe('web chat: the secrets tool form', () => {
  it('shows the form to the open page; the submitted value reaches the handler only, the page gets the outcome', async () => {
    const submitted: Array<{ id: string; userId: string; value: string; origin: unknown }> = [];
    const adapter = createWebAdapter(
      { host: '127.0.0.1', port: 0, token: undefined },
      {
        token: TOKEN,
        onApprovalClick: async () => ({ kind: 'not-found' }),
        secretPrompts: {
          open: async ({ id }) => (id === 'req-12345678' ? { ok: true, name: 'API_KEY' } : { ok: false, text: 'This request is no longer open.' }),
          submit: async (s) => (submitted.push(s), { ok: true, text: 'API_KEY saved.' }),
        },
      },
    );
    await adapter.start(async () => {});
    started.push(adapter);
    const page = await connect(adapter.url!);
    await page.waitFor((f) => f.type === 'history');
    await adapter.askSecret!({ provider: 'web', channelId: 'web' }, { id: 'req-12345678', name: 'API_KEY', reason: 'to call the API', requesterId: 'local' });
    const form = await page.waitFor((f) => f.type === 'secret');
    expect(form).toEqual({ type: 'secret', prompt: { id: 'req-12345678', name: 'API_KEY', reason: 'to call the API' } });
    page.send({ type: 'secret', id: 'req-12345678', value: 'w3b-S3cret-Value' });
    const outcome = await page.waitFor((f) => f.type === 'message' && f.message.text === 'API_KEY saved.');
    expect(outcome.type).toBe('message');
    expect(submitted).toEqual([{ id: 'req-12345678', userId: 'local', value: 'w3b-S3cret-Value', origin: { provider: 'web', channelId: 'web', dm: true } }]);
    // A stale request is refused without reaching submit.
    page.send({ type: 'secret', id: 'req-00000000', value: 'x' });
    await page.waitFor((f) => f.type === 'message' && f.message.text === 'This request is no longer open.');
    expect(submitted).toHaveLength(1);
    expect(JSON.stringify(page.frames)).not.toContain('w3b-S3cret-Value');
    page.ws.close();
  });

  it('without a page open, askSecret fails (the tool says so)', async () => {
    const adapter = createWebAdapter(
      { host: '127.0.0.1', port: 0, token: undefined },
      { token: TOKEN, onApprovalClick: async () => ({ kind: 'not-found' }), secretPrompts: { open: async () => ({ ok: false, text: '' }), submit: async () => ({ ok: false, text: '' }) } },
    );
    await adapter.start(async () => {});
    started.push(adapter);
    await expect(adapter.askSecret!({ provider: 'web', channelId: 'web' }, { id: 'req-12345678', name: 'A', reason: 'r', requesterId: 'local' })).rejects.toThrow(/no web chat page/);
  });
});
