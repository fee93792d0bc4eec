import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { APIMessage } from 'discord-api-types/v10';
import type { InboundMessage } from '../../src/gateway/types.js';
import { ApprovalLedger } from '../../test/fakes/approval-ledger.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../../test/fakes/discord/index.js';
import type { AdapterDeps } from '../common/adapter-deps.js';
import { sendJson } from '../../test/fakes/recorder.js';
import { memoryCardStore } from '../../src/gateway/approval-card-store.js';
import { createDiscordAdapter, type DiscordAdapter } from './adapter.js';

const GUILD = '300000000000000001';
const GENERAL = '300000000000000002';
const DEV = '300000000000000003';
const THREAD = '300000000000000004';
const alice = fakeUser('400000000000000001', 'alice');
const owner = fakeUser('400000000000000009', 'olga');

let fake: DiscordFake;
let adapter: DiscordAdapter;
let inbound: InboundMessage[];
let ledger: ApprovalLedger;

async function start(deps: Partial<AdapterDeps> = {}) {
  fake = await startDiscordFake();
  ledger = new ApprovalLedger([owner.id]);
  await connect(deps);
}

/** A fresh adapter on the running fake, as after a restart of the bot. */
async function connect(deps: Partial<AdapterDeps> = {}) {
  inbound = [];
  adapter = createDiscordAdapter(
    { token: 'test-token', apiBaseUrl: fake.apiBaseUrl, requireMention: true, guilds: {} },
    { onApprovalClick: ledger.onApprovalClick, approvers: [owner.id], approvalsTarget: 'channel', ...deps },
  );
  await adapter.start(async (m) => void inbound.push(m));
}

async function nextInbound(count = 1): Promise<InboundMessage> {
  // A generous deadline: the fake gateway is slow to deliver on a loaded machine.
  for (const until = Date.now() + 20_000; inbound.length < count && Date.now() < until; ) await sleep(10);
  expect(inbound.length).toBeGreaterThanOrEqual(count);
  return inbound[count - 1]!;
}

const messagePosts = (channelId: string) => fake.requests.filter((r) => r.method === 'POST' && r.path === `/channels/${channelId}/messages`);

afterEach(async () => {
  await adapter?.stop();
  await fake?.close();
});

describe('Discord adapter: a token pasted with its "Bot " prefix', () => {
  it('sends the prefix once: Discord gets "Bot <token>", not "Bot Bot <token>"', async () => {
    fake = await startDiscordFake({ token: 'test-token' });
    ledger = new ApprovalLedger([owner.id]);
    adapter = createDiscordAdapter(
      { token: 'Bot test-token', apiBaseUrl: fake.apiBaseUrl, requireMention: true, guilds: {} },
      { onApprovalClick: ledger.onApprovalClick, approvers: [owner.id], approvalsTarget: 'channel' },
    );
    await adapter.start(async () => undefined);
    const gateway = await fake.requests.waitFor((r) => r.path === '/gateway/bot');
    expect(gateway.headers.authorization).toBe('Bot test-token');
  });
});

describe('Discord adapter: connection and inbound messages', () => {
  beforeEach(() => start());

  it('identifies with the bot token and the guild, message, content and DM intents', async () => {
    expect(await fake.identifiedIntents()).toBe(37377);
    const gateway = await fake.requests.waitFor((r) => r.path === '/gateway/bot');
    expect(gateway.headers.authorization).toBe('Bot test-token');
    expect(adapter.botUserId).toBe(fake.bot.id);
  });

  it('normalises a guild channel message', async () => {
    const sent = fake.userMessage({ author: alice, channelId: GENERAL, content: 'hello there' })!;
    expect(await nextInbound()).toMatchObject({
      provider: 'discord',
      chatType: 'channel',
      guildId: GUILD,
      channelId: GENERAL,
      channelName: 'general',
      senderId: alice.id,
      senderName: 'Alice',
      text: 'hello there',
      mentionsBot: false,
      messageId: sent.id,
    });
    expect(inbound[0]!.threadId).toBeUndefined();
  });

  it('marks a mention of the bot', async () => {
    fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> /exec ls -la` });
    expect(await nextInbound()).toMatchObject({ mentionsBot: true, text: `<@${fake.bot.id}> /exec ls -la`, channelName: 'dev' });
  });

  it('gives a thread message its parent channel id and name', async () => {
    fake.userMessage({ author: alice, channelId: THREAD, content: 'in the thread' });
    expect(await nextInbound()).toMatchObject({ chatType: 'thread', channelId: DEV, channelName: 'dev', threadId: THREAD, guildId: GUILD });
  });

  it('fetches the parent of a thread the client never saw', async () => {
    fake.guilds[0]!.channels.push({ id: '300000000000000077', name: 'late-thread', type: 11, parentId: GENERAL });
    fake.userMessage({ author: alice, channelId: '300000000000000077', content: 'late', uncachedThread: true });
    expect(await nextInbound()).toMatchObject({ chatType: 'thread', channelId: GENERAL, channelName: 'general', threadId: '300000000000000077' });
    expect(fake.requests.filter((r) => r.method === 'GET' && r.path === '/channels/300000000000000077')).toHaveLength(1);
  });

  it('receives a DM through the partial channel', async () => {
    fake.userMessage({ author: alice, dm: true, content: 'psst' });
    const m = await nextInbound();
    expect(m).toMatchObject({ chatType: 'dm', channelId: fake.dmChannelOf(alice.id), senderId: alice.id, text: 'psst' });
    expect(m.guildId).toBeUndefined();
  });

  it('ignores its own messages; marks other bots for the access gate', async () => {
    fake.userMessage({ author: fake.bot, channelId: GENERAL, content: 'echo of myself' });
    fake.userMessage({ author: fakeUser('400000000000000055', 'otherbot'), authorIsBot: true, channelId: GENERAL, content: 'beep' });
    fake.userMessage({ author: alice, channelId: GENERAL, content: 'real' });
    expect(await nextInbound(1)).toMatchObject({ text: 'beep', senderIsBot: true });
    const real = await nextInbound(2);
    expect(real.text).toBe('real');
    expect(real.senderIsBot).toBeUndefined();
    await sleep(200);
    expect(inbound.map((m) => m.text)).toEqual(['beep', 'real']);
  });
});

describe('Discord adapter: replies', () => {
  beforeEach(() => start());

  it('chunks long replies at 2,000 characters with code fences balanced', async () => {
    const code = Array.from({ length: 120 }, (_, i) => `console.log(${i}); // line ${i} of the example`).join('\n');
    const text = `Here is the script:\n\`\`\`js\n${code}\n\`\`\`\nRun it with node.`;
    await adapter.send({ provider: 'discord', channelId: GENERAL }, { text });
    const posts = messagePosts(GENERAL);
    expect(posts.length).toBeGreaterThanOrEqual(3);
    for (const post of posts) {
      const content = post.body.content as string;
      expect(content.length).toBeLessThanOrEqual(2000);
      expect(content.split('\n').filter((l) => l.startsWith('```')).length % 2).toBe(0);
    }
    expect((posts[1]!.body.content as string).startsWith('```js\n')).toBe(true);
    expect(posts.at(-1)!.body.content).toMatch(/Run it with node\.$/);
  });

  it('the fake rejects over-long content as Discord does', async () => {
    const res = await fetch(`${fake.apiBaseUrl}/v10/channels/${GENERAL}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bot x' },
      body: JSON.stringify({ content: 'x'.repeat(2001) }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: number }).code).toBe(50035);
  });

  it('sends an attachment as a file on the last chunk', async () => {
    await adapter.send({ provider: 'discord', channelId: GENERAL }, { text: 'Build log attached.', attachment: { name: 'build.log', content: 'step 1\nstep 2\n' } });
    const [post] = messagePosts(GENERAL);
    expect(post!.headers['content-type']).toMatch(/^multipart\/form-data/);
    expect(post!.body.content).toBe('Build log attached.');
    expect(post!.files).toEqual([{ field: 'files[0]', name: 'build.log', content: 'step 1\nstep 2\n' }]);
  });

  it('turns a very long reply into a file with a short note', async () => {
    const text = 'word '.repeat(3000);
    await adapter.send({ provider: 'discord', channelId: GENERAL }, { text });
    const posts = messagePosts(GENERAL);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.body.content).toMatch(/attached as reply\.md/);
    expect(posts[0]!.files[0]).toMatchObject({ name: 'reply.md', content: text });
  });

  it('replies into a thread and into a user DM', async () => {
    await adapter.send({ provider: 'discord', channelId: DEV, threadId: THREAD }, { text: 'thread reply' });
    await adapter.send({ provider: 'discord', channelId: GENERAL, dmUserId: alice.id }, { text: 'dm reply' });
    expect(messagePosts(THREAD).map((r) => r.body.content)).toEqual(['thread reply']);
    const dm = fake.requests.filter((r) => r.path === '/users/@me/channels');
    expect(dm.map((r) => r.body.recipient_id)).toEqual([alice.id]);
    expect(messagePosts(fake.dmChannelOf(alice.id)).map((r) => r.body.content)).toEqual(['dm reply']);
  });

  it('rejects with Discord\'s error when a post is refused', async () => {
    fake.override(
      (r) => r.method === 'POST' && r.path === `/channels/${GENERAL}/messages`,
      (_r, res) => (sendJson(res, 403, { message: 'Missing Permissions', code: 50013 }), true),
    );
    await expect(adapter.send({ provider: 'discord', channelId: GENERAL }, { text: 'hi' })).rejects.toMatchObject({ status: 403, code: 50013 });
  });

  it('shows typing until stopped', async () => {
    const stop = adapter.typing({ provider: 'discord', channelId: GENERAL });
    await fake.requests.waitFor((r) => r.path === `/channels/${GENERAL}/typing`);
    stop();
    await sleep(100);
    expect(fake.requests.filter((r) => r.path.endsWith('/typing'))).toHaveLength(1);
  });
});

describe('Discord adapter: approval cards', () => {
  const cardPost = async (channelId: string) => {
    const post = await fake.requests.waitFor((r) => r.method === 'POST' && r.path === `/channels/${channelId}/messages` && r.body?.embeds?.length > 0);
    return post;
  };
  const postedCard = (channelId: string): APIMessage => fake.botMessagesIn(channelId).find((m) => m.embeds.length > 0)!;
  const buttonIds = (message: APIMessage): string[] =>
    (message.components ?? []).flatMap((row: any) => row.components.map((c: any) => c.custom_id as string));

  it('renders the command, agent, channel, requester, expiry and only the allowed buttons', async () => {
    await start();
    const request = ledger.create({ provider: 'discord', channelId: DEV, requesterId: alice.id, fullText: 'rm -rf ./build && make', allowedDecisions: ['deny', 'allow-once'] });
    await adapter.approvals.show(request);
    const post = await cardPost(DEV);
    const embed = post.body.embeds[0];
    expect(embed.title).toBe('Exec approval required');
    expect(embed.description).toContain('```\nrm -rf ./build && make\n```');
    expect(embed.fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'Agent', value: 'main' }),
        expect.objectContaining({ name: 'Session', value: 'agent:main:test' }),
        expect.objectContaining({ name: 'Channel', value: `<#${DEV}>` }),
        expect.objectContaining({ name: 'Requested by', value: `<@${alice.id}>` }),
        expect.objectContaining({ name: 'Expires', value: `<t:${Math.floor(request.expiresAt / 1000)}:R>` }),
      ]),
    );
    const buttons = post.body.components[0].components;
    expect(buttons.map((b: any) => [b.label, b.style])).toEqual([
      ['Allow once', 3],
      ['Deny', 4],
    ]);
    expect(post.body.allowed_mentions).toEqual({ parse: [] });
  });

  it('says when the command is too long for the card and attaches the full text', async () => {
    await start();
    const fullText = `python3 -c "${'print(1);'.repeat(500)}"`;
    // Many long facts too: the card must still fit Discord's embed limits.
    const facts = Array.from({ length: 30 }, (_, i) => ({ label: `fact ${i}`, value: 'v'.repeat(900) }));
    const request = ledger.create({ provider: 'discord', channelId: DEV, fullText, facts });
    await adapter.approvals.show(request);
    const post = await cardPost(DEV);
    expect(post.body.embeds[0].description).toContain(`The command is ${fullText.length.toLocaleString('en-US')} characters, too long for this card`);
    expect(post.files).toEqual([{ field: 'files[0]', name: `approval-${request.id}.txt`, content: fullText }]);
  });

  it('refuses a non-approver privately and changes nothing', async () => {
    await start();
    const request = ledger.create({ provider: 'discord', channelId: DEV, requesterId: alice.id });
    await adapter.approvals.show(request);
    await cardPost(DEV);
    const card = postedCard(DEV);
    const click = fake.click({ message: card, customId: buttonIds(card)[0]!, user: alice });
    const ack = await fake.interactionCallback(click.id);
    expect(ack.body.type).toBe(6);
    const refusal = await fake.requests.waitFor((r) => r.method === 'POST' && r.path.startsWith(`/webhooks/${fake.bot.id}/${click.token}`));
    expect(refusal.body).toMatchObject({ content: 'You are not allowed to approve this request.', flags: 64 });
    expect(ledger.requests.get(request.id)!.status).toBe('pending');
    expect(fake.requests.filter((r) => r.method === 'PATCH')).toHaveLength(0);
    expect(buttonIds(fake.messages.get(card.id)!)).toHaveLength(4); // three decisions and Deny with reason
  });

  it('edits the card to the outcome when the approver clicks, and answers a second click with "already resolved"', async () => {
    await start();
    const request = ledger.create({ provider: 'discord', channelId: DEV, requesterId: alice.id });
    await adapter.approvals.show(request);
    await cardPost(DEV);
    const card = postedCard(DEV);
    const allowOnce = buttonIds(card).find((id) => id.includes(':allow-once:'))!;
    const first = fake.click({ message: card, customId: allowOnce, user: owner });
    const edit = await fake.requests.waitFor((r) => r.method === 'PATCH' && r.path === `/webhooks/${fake.bot.id}/${first.token}/messages/@original`);
    expect(edit.body.embeds[0].title).toBe('Exec approval: Allowed once');
    expect(edit.body.embeds[0].description).toContain(`**Allowed once by <@${owner.id}>**`);
    expect(edit.body.components).toEqual([]);
    // The click carries the conversation Discord reported for it: the card's channel, in its guild.
    expect(ledger.clicks).toEqual([{ approvalId: request.id, decision: 'allow-once', userId: owner.id, origin: { provider: 'discord', guildId: GUILD, channelId: DEV, dm: false }, outcome: 'resolved' }]);

    const second = fake.click({ message: card, customId: buttonIds(card).find((id) => id.includes(':deny:'))!, user: owner });
    const reply = await fake.requests.waitFor((r) => r.method === 'POST' && r.path === `/webhooks/${fake.bot.id}/${second.token}`);
    expect(reply.body).toMatchObject({ content: `This approval was already resolved: Allowed once by <@${owner.id}>`, flags: 64 });
    expect(ledger.requests.get(request.id)!.status).toBe('allow-once');
  });

  it('edits the card through the channel when the interaction edit fails (an expired token)', async () => {
    await start();
    const request = ledger.create({ provider: 'discord', channelId: DEV });
    await adapter.approvals.show(request);
    const card = postedCard(DEV);
    fake.override(
      (r) => r.method === 'PATCH' && r.path.startsWith('/webhooks/'),
      (_r, res) => (sendJson(res, 404, { message: 'Unknown Webhook', code: 10015 }), true),
    );
    fake.click({ message: card, customId: buttonIds(card)[0]!, user: owner });
    const patch = await fake.requests.waitFor((r) => r.method === 'PATCH' && r.path === `/channels/${DEV}/messages/${card.id}`);
    expect(patch.body.embeds[0].description).toContain(`Allowed once by <@${owner.id}>`);
    expect(fake.messages.get(card.id)!.components).toEqual([]);
  });

  it('posts an approval\'s outcome as a reply to its card, without pinging; elsewhere as a plain post', async () => {
    await start();
    const request = ledger.create({ provider: 'discord', channelId: DEV, via: 'agent', requesterId: alice.id });
    await adapter.approvals.show(request);
    const card = (await cardPost(DEV)).body;
    expect(card.embeds[0].fields).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Requested by', value: `the agent for <@${alice.id}>` })]));
    const cardId = postedCard(DEV).id;
    await adapter.send({ provider: 'discord', channelId: DEV }, { text: 'Result:\n```\nok\n```', linkedApproval: request.id });
    const reply = messagePosts(DEV).at(-1)!;
    expect(reply.body).toMatchObject({ content: 'Result:\n```\nok\n```', message_reference: { message_id: cardId, fail_if_not_exists: false }, allowed_mentions: { parse: ['users'] } });
    // In another channel the card is not there to reply to.
    await adapter.send({ provider: 'discord', channelId: GENERAL }, { text: 'elsewhere', linkedApproval: request.id });
    expect(messagePosts(GENERAL).at(-1)!.body.message_reference).toBeUndefined();
  });

  it('edits the card to Expired on update', async () => {
    await start();
    const request = ledger.create({ provider: 'discord', channelId: DEV });
    await adapter.approvals.show(request);
    await cardPost(DEV);
    const card = postedCard(DEV);
    await adapter.approvals.update(ledger.expire(request.id));
    const patch = await fake.requests.waitFor((r) => r.method === 'PATCH' && r.path === `/channels/${DEV}/messages/${card.id}`);
    expect(patch.body.embeds[0].title).toBe('Exec approval: Expired');
    expect(patch.body.embeds[0].color).toBe(0x99aab5);
    expect(patch.body.components).toEqual([]);
  });

  it('with target "both" posts to the channel and each approver DM, and a click updates every copy', async () => {
    await start({ approvalsTarget: 'both', approvers: [owner.id, alice.id] });
    const request = ledger.create({ provider: 'discord', channelId: DEV });
    await adapter.approvals.show(request);
    const ownerDm = fake.dmChannelOf(owner.id);
    const aliceDm = fake.dmChannelOf(alice.id);
    expect([DEV, ownerDm, aliceDm].map((c) => fake.botMessagesIn(c).length)).toEqual([1, 1, 1]);
    const dmCard = postedCard(ownerDm);
    const click = fake.click({ message: dmCard, customId: buttonIds(dmCard)[2]!, user: owner });
    await fake.requests.waitFor((r) => r.method === 'PATCH' && r.path.includes(click.token));
    await fake.requests.waitFor((r) => r.method === 'PATCH' && r.path === `/channels/${aliceDm}/messages/${postedCard(aliceDm).id}`);
    for (const channel of [DEV, ownerDm, aliceDm]) {
      const message = fake.messages.get(postedCard(channel).id)!;
      expect(message.components).toEqual([]);
      expect(message.embeds[0]!.description).toContain(`Denied by <@${owner.id}>`);
    }
  });

  it('edits a card posted before a restart, through a shared card store', async () => {
    const cards = memoryCardStore();
    await start({ cards });
    const request = ledger.create({ provider: 'discord', channelId: DEV });
    await adapter.approvals.show(request);
    const card = postedCard(DEV);
    await adapter.stop();
    await connect({ cards });
    await adapter.approvals.update(ledger.expire(request.id));
    const patch = await fake.requests.waitFor((r) => r.method === 'PATCH' && r.path === `/channels/${DEV}/messages/${card.id}`);
    expect(patch.body.components).toEqual([]);
    expect(fake.messages.get(card.id)!.embeds[0]!.title).toBe('Exec approval: Expired');
  });

  it('fails show() when no copy of the card could be posted', async () => {
    await start();
    fake.override(
      (r) => r.method === 'POST' && r.path === `/channels/${DEV}/messages`,
      (_r, res) => (sendJson(res, 403, { message: 'Missing Permissions', code: 50013 }), true),
    );
    await expect(adapter.approvals.show(ledger.create({ provider: 'discord', channelId: DEV }))).rejects.toThrow(/no card could be posted/);
  });

  it('posts to the approvers by DM when the request came from another platform', async () => {
    await start();
    const request = ledger.create({ provider: 'slack', channelId: 'C0000GEN' });
    await adapter.approvals.show(request);
    expect(fake.botMessagesIn(fake.dmChannelOf(owner.id))).toHaveLength(1);
    expect(messagePosts(DEV)).toHaveLength(0);
  });
});
