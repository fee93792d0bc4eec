import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/gateway/types.js';
import { ApprovalLedger } from '../../test/fakes/approval-ledger.js';
import { startSlackFake, TEAM_ID, type SlackFake, type SlackMessage } from '../../test/fakes/slack/index.js';
import type { AdapterDeps } from '../common/adapter-deps.js';
import { memoryCardStore } from '../../src/gateway/approval-card-store.js';
import { createSlackAdapter, nativeStreamUnsupported, type SlackAdapter } from './adapter.js';

const SECRET = 'signing-secret-for-tests';
const ALICE = 'U0000ALICE';
const OWNER = 'U0000OWNER';
const GENERAL = 'C0000GEN';

let fake: SlackFake;
let adapter: SlackAdapter;
let inbound: InboundMessage[];
let ledger: ApprovalLedger;

async function start(options: { socket?: boolean; deps?: Partial<AdapterDeps> } = {}) {
  fake = await startSlackFake();
  ledger = new ApprovalLedger([OWNER]);
  await connect(options);
}

/** A fresh adapter on the running fake, as after a restart of the bot. */
async function connect(options: { socket?: boolean; deps?: Partial<AdapterDeps> } = {}) {
  inbound = [];
  adapter = createSlackAdapter(
    {
      botToken: 'xoxb-fake',
      appToken: options.socket ? 'xapp-1-fake' : undefined,
      signingSecret: options.socket ? undefined : SECRET,
      apiUrl: fake.apiUrl,
      port: 0,
      host: '127.0.0.1',
      requireMention: true,
      channels: {},
    },
    { onApprovalClick: ledger.onApprovalClick, approvers: [OWNER], approvalsTarget: 'channel', ...options.deps },
  );
  await adapter.start(async (m) => void inbound.push(m));
}

const url = () => adapter.eventsUrl!;
const signed = { secret: SECRET };

async function waitInbound(count = 1): Promise<InboundMessage> {
  // A generous deadline: signed HTTP events are slow to arrive on a loaded machine.
  for (const until = Date.now() + 20_000; inbound.length < count && Date.now() < until; ) await sleep(10);
  expect(inbound.length).toBeGreaterThanOrEqual(count);
  return inbound[count - 1]!;
}

const cardIn = (channel: string): SlackMessage => [...fake.messages.values()].find((m) => m.channel === channel && m.blocks?.some((b) => b.block_id === 'warden_approval_header'))!;
const buttons = (message: SlackMessage) => message.blocks!.find((b) => b.type === 'actions')?.elements ?? [];
const click = (message: SlackMessage, decision: string, user: string) => {
  const button = buttons(message).find((b: any) => b.action_id === `warden_approval_${decision}`);
  return fake.blockActions({ message, actionId: button.action_id, value: button.value, user });
};

afterEach(async () => {
  await adapter?.stop();
  await fake?.close();
});

describe('Slack adapter over HTTP: inbound events', () => {
  it('normalises a channel message with the channel name and team', async () => {
    await start();
    const event = fake.messageEvent({ user: ALICE, channel: GENERAL, text: 'hello' });
    expect((await fake.sendEvent(url(), fake.envelope(event), signed)).status).toBe(200);
    expect(await waitInbound()).toMatchObject({
      provider: 'slack',
      chatType: 'channel',
      guildId: TEAM_ID,
      channelId: GENERAL,
      channelName: 'general',
      senderId: ALICE,
      text: 'hello',
      mentionsBot: false,
      messageId: event.ts,
    });
  });

  it('normalises a DM and a thread reply, and replies in the thread', async () => {
    await start();
    await fake.sendEvent(url(), fake.envelope(fake.messageEvent({ user: ALICE, channel: 'D0000ALICE', text: 'secret' })), signed);
    expect(await waitInbound()).toMatchObject({ chatType: 'dm', channelId: 'D0000ALICE', channelName: undefined });
    const root = fake.nextTs();
    await fake.sendEvent(url(), fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text: 'follow-up', threadTs: root })), signed);
    const reply = await waitInbound(2);
    expect(reply).toMatchObject({ chatType: 'thread', channelId: GENERAL, threadId: root });
    await adapter.send({ provider: 'slack', channelId: reply.channelId, threadId: reply.threadId }, { text: 'in thread' });
    expect((await fake.waitForCall('chat.postMessage')).body).toMatchObject({ channel: GENERAL, thread_ts: root, text: 'in thread' });
  });

  it('takes a mention that arrives as both app_mention and message once', async () => {
    await start();
    const ts = fake.nextTs();
    const text = `<@${fake.bot.userId}> status please`;
    await fake.sendEvent(url(), fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text, ts, type: 'app_mention' })), signed);
    await fake.sendEvent(url(), fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text, ts })), signed);
    expect(await waitInbound()).toMatchObject({ mentionsBot: true, text });
    await sleep(200);
    expect(inbound).toHaveLength(1);
  });

  it('ignores its own messages; marks other bots for the access gate', async () => {
    await start();
    await fake.sendEvent(url(), fake.envelope(fake.messageEvent({ user: fake.bot.userId, channel: GENERAL, text: 'me', extra: { bot_id: fake.bot.botId } })), signed);
    await fake.sendEvent(url(), fake.envelope(fake.messageEvent({ user: 'U0000OTHER', channel: GENERAL, text: 'bot', extra: { bot_id: 'B0000OTHER', subtype: 'bot_message' } })), signed);
    await fake.sendEvent(url(), fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text: 'human' })), signed);
    await waitInbound(2);
    await sleep(200);
    expect(inbound.map((m) => [m.text, m.senderIsBot ?? false])).toEqual([
      ['bot', true],
      ['human', false],
    ]);
  });

  it('processes a retried delivery of the same event once', async () => {
    await start();
    const envelope = fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text: 'only once' }));
    expect((await fake.sendEvent(url(), envelope, signed)).status).toBe(200);
    expect((await fake.sendEvent(url(), envelope, { ...signed, retryNum: 1 })).status).toBe(200);
    expect((await fake.sendEvent(url(), envelope, { ...signed, retryNum: 2 })).status).toBe(200);
    await waitInbound();
    await sleep(200);
    expect(inbound).toHaveLength(1);
  });

  it('asks the shared delivery log about a delivery new to this process, and skips one another instance handled', async () => {
    const asked: string[][] = [];
    // Another instance handled everything mentioning "elsewhere".
    await start({ deps: { deliveries: { firstTime: async (keys) => (asked.push([...keys]), !keys.some((k) => k.includes('elsewhere'))) } } });
    const here = fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text: 'here' }));
    await fake.sendEvent(url(), here, signed);
    await fake.sendEvent(url(), fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text: 'x', ts: '1700000999.elsewhere' })), signed);
    await waitInbound();
    // A repeat this process saw is skipped without asking the store.
    await fake.sendEvent(url(), here, { ...signed, retryNum: 1 });
    await sleep(200);
    expect(inbound.map((m) => m.text)).toEqual(['here']);
    expect(asked).toHaveLength(2);
    expect(asked[0]).toEqual([`slack:event:${TEAM_ID}:${String(here.event_id)}`, `slack:message:${TEAM_ID}:${GENERAL}:${String((here.event as { ts: string }).ts)}`]);
  });

  it("hands messages on in the order they arrived, whichever shared check answers first", async () => {
    // The first message's check is the slowest: without ordering, later messages would overtake it.
    const delays = [400, 0, 150];
    await start({ deps: { deliveries: { firstTime: async () => (await sleep(delays.shift() ?? 0), true) } } });
    for (const text of ['one', 'two', 'three']) await fake.sendEvent(url(), fake.envelope(fake.messageEvent({ user: ALICE, channel: `D${ALICE.slice(1)}`, text })), signed);
    await waitInbound(3);
    expect(inbound.map((m) => m.text)).toEqual(['one', 'two', 'three']);
  });

  it('a delivery log that cannot be reached leaves the decision to this process: the message is handled, its repeat skipped', async () => {
    let failures = 0;
    await start({ deps: { deliveries: { firstTime: async () => (failures++, Promise.reject(new Error('connection refused'))) } } });
    const envelope = fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text: 'store down' }));
    await fake.sendEvent(url(), envelope, signed);
    await fake.sendEvent(url(), envelope, { ...signed, retryNum: 1 });
    await waitInbound();
    await sleep(200);
    expect(inbound.map((m) => m.text)).toEqual(['store down']);
    expect(failures).toBe(1);
  });

  it.each([
    { name: 'a wrong signing secret', options: { secret: 'not-the-secret' } },
    { name: 'a timestamp six minutes old', options: { ...signed, timestamp: Math.floor(Date.now() / 1000) - 6 * 60 } },
    { name: 'a body changed after signing', options: { ...signed, tamper: true } },
    { name: 'no signature at all', options: { ...signed, unsigned: true } },
  ])('rejects a request with $name', async ({ options }) => {
    await start();
    const res = await fake.sendEvent(url(), fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text: 'forged' })), options);
    expect(res.status).toBe(401);
    await sleep(150);
    expect(inbound).toHaveLength(0);
  });

  it('answers a signed URL verification with its challenge', async () => {
    await start();
    const res = await fake.sendEvent(url(), { type: 'url_verification', token: 'legacy', challenge: 'c-123' }, signed);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ challenge: 'c-123' });
  });

  it('accepts a timestamp four minutes old', async () => {
    await start();
    const res = await fake.sendEvent(url(), fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text: 'slow' })), { ...signed, timestamp: Math.floor(Date.now() / 1000) - 4 * 60 });
    expect(res.status).toBe(200);
    await waitInbound();
  });
});

describe('Slack adapter: replies', () => {
  it('chunks long replies to at most 3,000 characters, fences balanced', async () => {
    await start();
    const text = `Output:\n\`\`\`\n${Array.from({ length: 300 }, (_, i) => `line ${i} ${'='.repeat(20)}`).join('\n')}\n\`\`\``;
    await adapter.send({ provider: 'slack', channelId: GENERAL }, { text });
    const posts = fake.calls('chat.postMessage');
    expect(posts.length).toBeGreaterThanOrEqual(3);
    for (const post of posts) {
      expect(post.body.text.length).toBeLessThanOrEqual(3000);
      expect((post.body.text as string).split('\n').filter((l) => l.startsWith('```')).length % 2).toBe(0);
      expect(post.headers.authorization).toBe('Bearer xoxb-fake');
    }
  });

  it('uploads a very long reply as a file, and an attachment after the text', async () => {
    await start();
    const long = 'data '.repeat(4000);
    await adapter.send({ provider: 'slack', channelId: GENERAL }, { text: long });
    const complete = await fake.waitForCall('files.completeUploadExternal');
    expect(complete.body).toMatchObject({ channel_id: GENERAL, initial_comment: expect.stringContaining('attached as reply.md') });
    const uploads = [...fake.uploads.values()];
    expect(uploads.map((u) => u.filename)).toEqual(['reply.md']);
    expect(uploads[0]!.content === long).toBe(true);
    expect(fake.calls('chat.postMessage')).toHaveLength(0);

    await adapter.send({ provider: 'slack', channelId: GENERAL, dmUserId: ALICE }, { text: 'log attached', attachment: { name: 'run.log', content: 'ok\n' } });
    expect(fake.calls('conversations.open').map((r) => r.body.users)).toEqual([ALICE]);
    expect(fake.calls('chat.postMessage').map((r) => [r.body.channel, r.body.text])).toEqual([['D0000ALICE', 'log attached']]);
    expect([...fake.uploads.values()][1]).toEqual({ filename: 'run.log', content: 'ok\n' });
  });
});

describe('Slack adapter: approval cards', () => {

  it('renders the command, context and only the allowed buttons', async () => {
    await start();
    const request = ledger.create({ provider: 'slack', channelId: GENERAL, requesterId: ALICE, fullText: 'cat a.txt > b.txt && echo <done>', allowedDecisions: ['allow-once', 'deny'] });
    await adapter.approvals.show(request);
    const post = await fake.waitForCall('chat.postMessage');
    const blocks = post.body.blocks as any[];
    expect(blocks[0].text.text).toBe('*Exec approval required*\nRun a shell command');
    expect(blocks[1].text.text).toBe('```\ncat a.txt &gt; b.txt &amp;&amp; echo &lt;done&gt;\n```');
    const context = blocks.find((b) => b.type === 'context' && b.elements.length >= 5).elements.map((e: any) => e.text);
    expect(context).toEqual([
      '*Agent:* main',
      '*Session:* agent:main:test',
      `*Channel:* <#${GENERAL}>`,
      `*Requested by:* <@${ALICE}>`,
      expect.stringMatching(new RegExp(`^\\*Expires:\\* <!date\\^${Math.floor(request.expiresAt / 1000)}\\^`)),
    ]);
    expect(buttons(cardIn(GENERAL)).map((b: any) => [b.text.text, b.style])).toEqual([
      ['Allow once', 'primary'],
      ['Deny', 'danger'],
      ['Deny with reason', undefined],
    ]);
    expect(post.body.text).toBe('Exec approval required: Run a shell command');
  });

  it('says when the command is too long and posts the full text in the card thread', async () => {
    await start();
    const fullText = `node -e "${'console.log(42);'.repeat(300)}"`;
    await adapter.approvals.show(ledger.create({ provider: 'slack', channelId: GENERAL, fullText }));
    const card = cardIn(GENERAL);
    expect(JSON.stringify(card.blocks)).toContain(`The command is ${fullText.length.toLocaleString('en-US')} characters, too long for this card`);
    const threadPosts = fake.calls('chat.postMessage').filter((r) => r.body.thread_ts === card.ts);
    expect(threadPosts.length).toBeGreaterThanOrEqual(2);
    expect(threadPosts.map((r) => (r.body.text as string).replace(/```\n?/g, '').replace(/\n$/, '')).join('')).toBe(fullText);
  });

  it('refuses a non-approver with an ephemeral message and changes nothing', async () => {
    await start();
    const request = ledger.create({ provider: 'slack', channelId: GENERAL, requesterId: ALICE });
    await adapter.approvals.show(request);
    const res = await fake.sendAction(url(), click(cardIn(GENERAL), 'allow-once', ALICE), signed);
    expect(res.status).toBe(200);
    const refusal = await fake.waitForCall('chat.postEphemeral');
    expect(refusal.body).toMatchObject({ channel: GENERAL, user: ALICE, text: 'You are not allowed to approve this request.' });
    expect(ledger.requests.get(request.id)!.status).toBe('pending');
    expect(fake.calls('chat.update')).toHaveLength(0);
  });

  it('updates the card when the approver clicks, and answers a second click with "already resolved"', async () => {
    await start();
    const request = ledger.create({ provider: 'slack', channelId: GENERAL, requesterId: ALICE });
    await adapter.approvals.show(request);
    const card = cardIn(GENERAL);
    expect((await fake.sendAction(url(), click(card, 'allow-once', OWNER), signed)).status).toBe(200);
    const update = await fake.waitForCall('chat.update');
    expect(update.body).toMatchObject({ channel: GENERAL, ts: card.ts });
    const blocks = update.body.blocks as any[];
    expect(blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(blocks.find((b) => b.block_id === 'warden_approval_outcome').text.text).toBe(`*Allowed once by <@${OWNER}>*`);
    expect(ledger.clicks.map((c) => c.outcome)).toEqual(['resolved']);

    await fake.sendAction(url(), click(card, 'deny', OWNER), signed);
    const again = await fake.waitForCall('chat.postEphemeral');
    expect(again.body.text).toBe(`This approval was already resolved: Allowed once by <@${OWNER}>`);
    expect(ledger.requests.get(request.id)!.status).toBe('allow-once');
  });

  it('updates a card posted before a restart, through a shared card store', async () => {
    const cards = memoryCardStore();
    await start({ deps: { cards } });
    const request = ledger.create({ provider: 'slack', channelId: GENERAL });
    await adapter.approvals.show(request);
    const card = cardIn(GENERAL);
    await adapter.stop();
    await connect({ deps: { cards } });
    await adapter.approvals.update(ledger.expire(request.id));
    expect((await fake.waitForCall('chat.update')).body).toMatchObject({ channel: GENERAL, ts: card.ts });
  });

  it('with target "dm" posts to each approver DM and not the channel', async () => {
    await start({ deps: { approvalsTarget: 'dm', approvers: [OWNER, ALICE] } });
    await adapter.approvals.show(ledger.create({ provider: 'slack', channelId: GENERAL }));
    expect(fake.calls('chat.postMessage').map((r) => r.body.channel)).toEqual(['D0000OWNER', 'D0000ALICE']);
  });

  it('rejects a reply Slack refuses, with Slack\'s error', async () => {
    await start();
    fake.override(
      (r) => r.path === '/api/chat.postMessage',
      (_r, res) => (res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: false, error: 'channel_not_found' })), true),
    );
    await expect(adapter.send({ provider: 'slack', channelId: 'C0000GONE' }, { text: 'hi' })).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
  });

  it('posts an approval\'s outcome in the thread of its card; a card already in a thread keeps it there', async () => {
    await start();
    const request = ledger.create({ provider: 'slack', channelId: GENERAL, requesterId: ALICE, via: 'agent' });
    await adapter.approvals.show(request);
    const card = await fake.waitForCall('chat.postMessage');
    expect(JSON.stringify(card.body.blocks)).toContain(`*Requested by:* the agent for <@${ALICE}>`);
    const cardTs = cardIn(GENERAL).ts;
    await adapter.send({ provider: 'slack', channelId: GENERAL }, { text: 'Result: ok', linkedApproval: request.id });
    const reply = fake.calls('chat.postMessage').at(-1)!;
    expect(reply.body).toMatchObject({ channel: GENERAL, text: 'Result: ok', thread_ts: cardTs });

    const inThread = ledger.create({ provider: 'slack', channelId: GENERAL, threadId: '1700000000.000009' });
    await adapter.approvals.show(inThread);
    await adapter.send({ provider: 'slack', channelId: GENERAL, threadId: '1700000000.000009' }, { text: 'Result: ok', linkedApproval: inThread.id });
    expect(fake.calls('chat.postMessage').at(-1)!.body.thread_ts).toBe('1700000000.000009');
  });

  it('updates the card to Expired', async () => {
    await start();
    const request = ledger.create({ provider: 'slack', channelId: GENERAL, threadId: '1700000000.000009' });
    await adapter.approvals.show(request);
    expect((await fake.waitForCall('chat.postMessage')).body.thread_ts).toBe('1700000000.000009');
    await adapter.approvals.update(ledger.expire(request.id));
    const update = await fake.waitForCall('chat.update');
    expect(update.body.text).toMatch(/^Exec approval: Expired\./);
    expect((update.body.blocks as any[]).some((b) => b.type === 'actions')).toBe(false);
  });
});

describe('Slack adapter in Socket Mode', () => {
  it('receives events and clicks over the socket and acknowledges each envelope', async () => {
    await start({ socket: true });
    expect(adapter.mode).toBe('socket');
    expect(fake.calls('apps.connections.open')[0]!.headers.authorization).toBe('Bearer xapp-1-fake');

    const envelope = fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text: 'over the socket' }));
    const ack = await fake.pushSocket('events_api', envelope);
    expect(ack.payload ?? {}).toEqual({});
    expect(await waitInbound()).toMatchObject({ chatType: 'channel', text: 'over the socket', channelName: 'general' });
    await fake.pushSocket('events_api', envelope, 1);
    await sleep(150);
    expect(inbound).toHaveLength(1);

    const request = ledger.create({ provider: 'slack', channelId: GENERAL });
    await adapter.approvals.show(request);
    await fake.pushSocket('interactive', click(cardIn(GENERAL), 'deny', OWNER));
    const update = await fake.waitForCall('chat.update');
    expect(JSON.stringify(update.body.blocks)).toContain(`Denied by <@${OWNER}>`);
  });
});

describe('the Slack fake with several Socket Mode connections', () => {
  it('hands each envelope to one connection, in turn', async () => {
    fake = await startSlackFake();
    const socketApp = async () => {
      const received: InboundMessage[] = [];
      const app = createSlackAdapter(
        { botToken: 'xoxb-fake', appToken: 'xapp-1-fake', signingSecret: undefined, apiUrl: fake.apiUrl, port: 0, host: '127.0.0.1', requireMention: true, channels: {} },
        { onApprovalClick: async () => ({ kind: 'not-found' as const }), approvers: [OWNER], approvalsTarget: 'channel' },
      );
      await app.start(async (m) => void received.push(m));
      return { app, received };
    };
    const first = await socketApp();
    const second = await socketApp();
    adapter = second.app;
    try {
      expect(fake.socketClients).toBe(2);
      const acks = [];
      for (const n of [1, 2, 3, 4]) acks.push(await fake.pushSocket('events_api', fake.envelope(fake.messageEvent({ user: ALICE, channel: GENERAL, text: `event ${n}` }))));
      expect(acks.map((a) => a.connection)).toEqual([0, 1, 0, 1]);
      for (const until = Date.now() + 20_000; first.received.length + second.received.length < 4 && Date.now() < until; ) await sleep(10);
      await sleep(150);
      expect(first.received.map((m) => m.text)).toEqual(['event 1', 'event 3']);
      expect(second.received.map((m) => m.text)).toEqual(['event 2', 'event 4']);
    } finally {
      await first.app.stop();
    }
  });
});

describe('createSlackAdapter configuration', () => {
  it('names the missing keys', () => {
    const deps = { onApprovalClick: async () => ({ kind: 'not-found' as const }), approvers: [], approvalsTarget: 'channel' as const };
    expect(() => createSlackAdapter({ botToken: undefined, appToken: undefined, signingSecret: undefined, port: 0, host: '127.0.0.1', requireMention: true, channels: {} }, deps)).toThrow(
      /channels\.slack\.botToken[\s\S]*channels\.slack\.signingSecret/,
    );
  });
});

describe('which chat.startStream answers mean the workspace has no native streaming', () => {
  it.each([
    ['unknown_method', true],
    ['not_allowed', true],
    ['not_allowed_token_type', true],
    ['missing_scope', true],
    ['feature_not_enabled', true],
    // About this reply only: the next one, elsewhere, may stream.
    ['invalid_arguments', false],
    ['channel_not_found', false],
    ['channel_type_not_supported', false],
    ['ratelimited', false],
    ['msg_too_long', false],
  ])('%s → remembered as unsupported: %s', (error, expected) => {
    expect(nativeStreamUnsupported(error)).toBe(expected);
  });
});
