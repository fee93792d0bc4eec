// The message tool's actions against an attacker who steers the model: each row is a call the
// model makes, through the real tool, the real discord.js and Bolt adapters and the loopback
// fakes, and what must (not) happen on the platform. The gate decides from the config and the
// turn; the adapter checks what only the platform knows (the message's channel and author, what
// a channel is, where a file is hosted).
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiscordAdapter, type DiscordAdapter } from '../../adapters/discord/adapter.js';
import { createSlackAdapter, type SlackAdapter } from '../../adapters/slack/adapter.js';
import { messagingFor } from '../../src/app/tool-path.js';
import { approvalRuleFor } from '../../src/approvals/rules.js';
import { parseConfig } from '../../src/config/index.js';
import type { TurnContext } from '../../src/policy/context.js';
import { createMessageTool, type MessageArgs } from '../../src/tools/core/message/message.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';
import { ApprovalLedger } from '../fakes/approval-ledger.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';

const G1 = '300000000000000001';
const DEV = '300000000000000003';
const GENERAL = '300000000000000002';
const G2 = '310000000000000001';
const FOREIGN = '310000000000000002';
const FOREIGN_THREAD = '300000000000000007';
const alice = fakeUser('400000000000000001', 'alice');
const bob = fakeUser('400000000000000002', 'bob');

let discord: DiscordFake;
let slack: SlackFake;
let discordAdapter: DiscordAdapter;
let slackAdapter: SlackAdapter;
const workspace = mkdtempSync(path.join(tmpdir(), 'warden-msg-attack-'));

beforeAll(async () => {
  discord = await startDiscordFake({
    guilds: [
      { id: G1, name: 'Team', channels: [{ id: GENERAL, name: 'general', type: 0 }, { id: DEV, name: 'dev', type: 0 }, { id: FOREIGN_THREAD, name: 'secret-thread', type: 11, parentId: GENERAL }] },
      { id: G2, name: 'Elsewhere', channels: [{ id: FOREIGN, name: 'board', type: 0 }] },
    ],
  });
  slack = await startSlackFake({ channels: { C0000GEN: 'general', C0000DEV: 'dev', C0000HR: 'hr' } });
  const ledger = new ApprovalLedger([]);
  discordAdapter = createDiscordAdapter({ token: 't', apiBaseUrl: discord.apiBaseUrl, requireMention: true, guilds: {} }, { onApprovalClick: ledger.onApprovalClick, approvers: [], approvalsTarget: 'channel' });
  await discordAdapter.start(async () => undefined);
  slackAdapter = createSlackAdapter(
    { botToken: 'xoxb-fake', appToken: undefined, signingSecret: 's', apiUrl: slack.apiUrl, port: 0, host: '127.0.0.1', requireMention: true, channels: {} },
    { onApprovalClick: ledger.onApprovalClick, approvers: [], approvalsTarget: 'channel' },
  );
  await slackAdapter.start(async () => undefined);
});
afterAll(async () => {
  await Promise.all([discordAdapter?.stop(), slackAdapter?.stop()]);
  await Promise.all([discord?.close(), slack?.close()]);
});

const ALL = ['*'];
const discordTurn: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', guildId: G1, channelId: DEV, channelName: 'dev', senderId: alice.id, senderIsOwner: false, spawnDepth: 0 };
const slackTurn: TurnContext = { agentId: 'main', provider: 'slack', chat: 'channel', channelId: 'C0000DEV', channelName: 'dev', senderId: 'U0000ALICE', senderIsOwner: false, spawnDepth: 0 };

async function call(message: Record<string, unknown>, args: MessageArgs, turn: TurnContext): Promise<{ text: string; isError: boolean }> {
  const parsed = parseConfig({ tools: { message } });
  if (!parsed.ok) throw parsed.error;
  const tool = createMessageTool(parsed.value.config, messagingFor([discordAdapter, slackAdapter]));
  const result = (await tool.execute(args, { turn, workspaceDir: workspace } as unknown as ToolCallContext)) as ToolResult;
  return { text: (result.content[0] as { text: string }).text, isError: result.isError === true };
}

const changing = (r: RecordedRequest) => r.method !== 'GET' || r.path.startsWith('/attachments/');
/** Requests that change something on Discord (or fetch a file) since `from`. */
const discordWrites = (from: number) => discord.requests.records.slice(from).filter(changing).map((r) => `${r.method} ${r.path}`);
const SLACK_READS = new Set(['/api/auth.test', '/api/conversations.info', '/api/conversations.history', '/api/conversations.replies', '/api/pins.list']);
const slackWrites = (from: number) => slack.requests.records.slice(from).filter((r) => !SLACK_READS.has(r.path)).map((r) => r.path);

describe('message actions: the attacker table (Discord)', () => {
  // [attack, tools.message config, args, turn overrides, what the refusal says]
  const rows: Array<[string, Record<string, unknown>, () => MessageArgs, Partial<TurnContext>, RegExp]> = [
    ['an action the config never enabled', {}, () => ({ action: 'delete', messageId: mine().id }), { senderIsOwner: true }, /"delete" is not enabled/],
    ['a message id from another channel, acted on here', { actions: { allow: ALL } }, () => ({ action: 'react', messageId: inGeneral().id, emoji: '👍' }), {}, /Unknown Message/],
    ['a message id from another guild, acted on here', { actions: { allow: ALL } }, () => ({ action: 'pin', messageId: inForeign().id }), {}, /Unknown Message/],
    ['a "user:" target forged as a channel', { actions: { allow: ALL }, allowedTargets: ['*'] }, () => ({ action: 'read', channel: `user:${bob.id}` }), {}, /is not a discord channel id/],
    ['a channel mention forged as a channel', { actions: { allow: ALL } }, () => ({ action: 'read', channel: `<#${GENERAL}>` }), {}, /is not a discord channel id/],
    ["reading another user's DM (allowedTargets '*')", { actions: { allow: ALL }, allowedTargets: ['*'] }, () => ({ action: 'read', channel: discord.dmChannelOf(bob.id) }), {}, /direct messages are for owners only/],
    ['reading another guild\'s channel it was not given', { actions: { allow: ALL } }, () => ({ action: 'read', channel: FOREIGN }), {}, /not allowed from here/],
    ['reading elsewhere with visibility self, as an owner', { actions: { allow: ALL } }, () => ({ action: 'read', channel: GENERAL }), { senderIsOwner: true }, /tools\.sessions\.visibility: self/],
    ['a thread in a channel it may not post in', { actions: { allow: ALL } }, () => ({ action: 'thread-create', channel: GENERAL, name: 'x' }), {}, /not allowed from here/],
    ['a plain send into a thread of another channel, addressed from here', {}, () => ({ text: 'hi', threadId: FOREIGN_THREAD }), {}, /is not a thread of discord channel/],
    ['a reply into a thread of another channel, addressed from here', { actions: { allow: ALL } }, () => ({ action: 'thread-reply', threadId: FOREIGN_THREAD, text: 'hi' }), {}, /is not a thread of discord channel/],
    ['pinning in another channel\'s thread, addressed from here', { actions: { allow: ALL } }, () => ({ action: 'pin', threadId: FOREIGN_THREAD, messageId: mine().id }), {}, /is not a thread of channel/],
    ['a huge emoji', { actions: { allow: ALL } }, () => ({ action: 'react', messageId: human().id, emoji: '😀'.repeat(30) }), {}, /is not a discord emoji/],
    ['a custom emoji of no guild', { actions: { allow: ALL } }, () => ({ action: 'react', messageId: human().id, emoji: '<:pwn:123456789012345678>' }), {}, /Unknown Emoji/],
    ['a path smuggled in an emoji', { actions: { allow: ALL } }, () => ({ action: 'react', messageId: human().id, emoji: 'a:1/../../../guilds' }), {}, /is not a discord emoji/],
    ["deleting a person's message", { actions: { allow: ALL } }, () => ({ action: 'delete', messageId: human().id }), { senderIsOwner: true }, /not posted by this bot/],
    ["editing a person's message", { actions: { allow: ALL } }, () => ({ action: 'edit', messageId: human().id, text: 'I resign' }), { senderIsOwner: true }, /not posted by this bot/],
    ['a 2 GB file', { actions: { allow: ALL } }, () => withFile({ size: 2_000_000_000 }), {}, /over the 20971520-byte limit/],
    ['a file at the metadata address', { actions: { allow: ALL } }, () => withFile({ url: 'http://169.254.169.254/latest/meta-data/iam' }), {}, /not the platform's file host/],
    ['a file on a look-alike CDN host', { actions: { allow: ALL } }, () => withFile({ url: 'https://cdn.discordapp.com.evil.example/x.txt' }), {}, /not the platform's file host/],
    ['a file id the message does not have', { actions: { allow: ALL } }, () => ({ action: 'download-file', messageId: human().id, fileId: '1' }), {}, /has no file 1/],
  ];
  let humanMessage: ReturnType<DiscordFake['userMessage']>;
  const human = () => (humanMessage ??= discord.userMessage({ author: alice, channelId: DEV, content: 'my message' }))!;
  const inGeneral = () => discord.userMessage({ author: bob, channelId: GENERAL, content: 'elsewhere' })!;
  const inForeign = () => discord.userMessage({ author: bob, channelId: FOREIGN, content: 'board only' })!;
  const mine = () => {
    const stored = { ...human(), id: String(BigInt(human().id) + 1000n), author: discord.bot };
    discord.messages.set(stored.id, stored);
    return stored;
  };
  /** A person's message whose attachment Discord reports with this size or URL. */
  const withFile = (over: { size?: number; url?: string }): MessageArgs => {
    const m = discord.userMessage({ author: alice, channelId: DEV, content: 'file', attachments: [{ name: 'a.txt', contentType: 'text/plain', data: Buffer.from('x') }] })!;
    const att = { ...(m.attachments[0] as object), ...over } as { id: string };
    discord.messages.set(m.id, { ...m, attachments: [att] } as never);
    return { action: 'download-file', messageId: m.id, fileId: att.id };
  };

  it.each(rows)('%s', async (_attack, message, args, over, refusal) => {
    const made = args();
    const visibility = _attack.includes('visibility self') ? { sessions: { visibility: 'self' } } : {};
    const parsed = parseConfig({ tools: { message, ...visibility } });
    if (!parsed.ok) throw parsed.error;
    const tool = createMessageTool(parsed.value.config, messagingFor([discordAdapter, slackAdapter]));
    const from = discord.requests.records.length;
    const files = readdirSync(workspace).length;
    const result = (await tool.execute(made, { turn: { ...discordTurn, ...over }, workspaceDir: workspace } as unknown as ToolCallContext)) as ToolResult;
    const text = (result.content[0] as { text: string }).text;
    expect(result.isError, text).toBe(true);
    expect(text).toMatch(refusal);
    // Nothing changed on Discord, nothing fetched, nothing written. Where Discord itself is the
    // check (a message under another channel, an emoji of no guild), the one request it refused.
    const writes = discordWrites(from);
    if (/Unknown (Message|Emoji)/.test(refusal.source)) {
      expect(writes.length).toBeLessThanOrEqual(1);
      for (const m of discord.messages.values()) expect((m as { reactions?: unknown[] }).reactions ?? [], m.id).not.toContainEqual(expect.objectContaining({ me: true, emoji: expect.objectContaining({ name: 'pwn' }) }));
      expect([...discord.messages.values()].filter((m) => m.pinned)).toEqual([]);
    } else expect(writes).toEqual([]);
    expect(readdirSync(workspace).length).toBe(files);
  });

  it('a refused custom emoji reached Discord only as the reaction request Discord itself refused', async () => {
    const m = discord.userMessage({ author: alice, channelId: DEV, content: 'react here' })!;
    await call({ actions: { allow: ALL } }, { action: 'react', messageId: m.id, emoji: 'pwn:123456789012345678' }, discordTurn);
    expect((discord.messages.get(m.id) as { reactions?: unknown }).reactions).toBeUndefined();
  });

  it('the same calls go through when they are legitimate: the row is refused for its reason, not by accident', async () => {
    const m = discord.userMessage({ author: alice, channelId: DEV, content: 'fine' })!;
    expect((await call({ actions: { allow: ALL } }, { action: 'react', messageId: m.id, emoji: '👍' }, discordTurn)).isError).toBe(false);
    expect((await call({ actions: { allow: ALL } }, { action: 'read', channel: GENERAL }, { ...discordTurn, senderIsOwner: true })).isError).toBe(false);
    expect((await call({ actions: { allow: ALL } }, { action: 'read', channel: discord.dmChannelOf(bob.id) }, { ...discordTurn, senderIsOwner: true })).isError).toBe(false);
    const file = discord.userMessage({ author: alice, channelId: DEV, content: 'file', attachments: [{ name: 'ok.txt', contentType: 'text/plain', data: Buffer.from('ok') }] })!;
    const got = await call({ actions: { allow: ALL } }, { action: 'download-file', messageId: file.id, fileId: (file.attachments[0] as { id: string }).id }, discordTurn);
    expect(got.text).toMatch(/^Saved 2 bytes as downloads\//);
  });
});

describe('message actions: the attacker table (Slack)', () => {
  const post = (user: string, channel: string, text: string, files?: unknown[]) => {
    const e = slack.messageEvent({ user, channel, text, ...(files ? { extra: { files } } : {}) });
    return String(e.ts);
  };
  const rows: Array<[string, Record<string, unknown>, () => MessageArgs, Partial<TurnContext>, RegExp]> = [
    ["reading another user's DM (allowedTargets '*')", { actions: { allow: ALL }, allowedTargets: ['*'] }, () => ({ action: 'read', channel: 'D0000BOB' }), {}, /direct messages are for owners only/],
    ['a channel the workspace does not have', { actions: { allow: ALL }, allowedTargets: ['*'] }, () => ({ action: 'read', channel: 'C0000NOPE' }), { senderIsOwner: true }, /does not know the channel/],
    ['a user id as a channel', { actions: { allow: ALL }, allowedTargets: ['*'] }, () => ({ action: 'read', channel: 'U0000BOB' }), {}, /is not a slack channel id/],
    ['a ts from another channel, acted on here', { actions: { allow: ALL } }, () => ({ action: 'react', messageId: post('U0000BOB', 'C0000HR', 'salaries'), emoji: 'eyes' }), {}, /message_not_found/],
    ["deleting a person's message", { actions: { allow: ALL } }, () => ({ action: 'delete', messageId: post('U0000BOB', 'C0000DEV', 'mine') }), { senderIsOwner: true }, /not posted by this bot/],
    ["editing a person's message", { actions: { allow: ALL } }, () => ({ action: 'edit', messageId: post('U0000BOB', 'C0000DEV', 'mine'), text: 'x' }), { senderIsOwner: true }, /not posted by this bot/],
    ['a reaction name with spaces', { actions: { allow: ALL } }, () => ({ action: 'react', messageId: post('U0000BOB', 'C0000DEV', 'x'), emoji: 'thumbs up' }), {}, /is not a slack emoji/],
    ['url_private on another host (the bot token would go with it)', { actions: { allow: ALL } }, () => slackFile({ url_private: 'https://evil.example/steal', url_private_download: undefined }), {}, /not the platform's file host/],
    ['url_private at the metadata address', { actions: { allow: ALL } }, () => slackFile({ url_private_download: 'http://169.254.169.254/latest/meta-data/' }), {}, /not the platform's file host/],
    ['a 2 GB Slack file', { actions: { allow: ALL } }, () => slackFile({ size: 2_000_000_000 }), {}, /over the 20971520-byte limit/],
  ];
  const slackFile = (over: Record<string, unknown>): MessageArgs => {
    const file = { ...slack.hostFile({ name: 'n.txt', mimetype: 'text/plain', data: Buffer.from('n') }), ...over };
    return { action: 'download-file', messageId: post('U0000BOB', 'C0000DEV', 'file', [file]), fileId: String(file.id) };
  };

  it.each(rows)('%s', async (_attack, message, args, over, refusal) => {
    const made = args();
    const from = slack.requests.records.length;
    const result = await call(message, made, { ...slackTurn, ...over });
    expect(result.isError, result.text).toBe(true);
    expect(result.text).toMatch(refusal);
    // Where Slack itself is the check (a ts under another channel), the one request it refused.
    const writes = slackWrites(from);
    if (/message_not_found/.test(refusal.source)) expect(writes).toEqual(['/api/reactions.add']);
    else expect(writes).toEqual([]);
    expect([...slack.userMessages.values()].flatMap((m) => m.reactions ?? [])).toEqual([]);
    expect(slack.requests.records.slice(from).filter((r) => r.path.startsWith('/files-pri/'))).toEqual([]);
  });
});

describe('message actions: the agent allowlist and the platform action groups (Discord and Slack)', () => {
  // [attack, the whole config, platform, args, turn overrides, what the refusal says]: the model of
  // a narrowed agent, or on a platform whose group is off, asks anyway; nothing reaches the platform.
  const OPS_NARROW = { tools: { message: { actions: { allow: ALL } } }, agents: { list: [{ id: 'main' }, { id: 'ops', tools: { message: { actions: { allow: ['send'] } } } }] } };
  const OPS_WIDE_PINS_OFF = { agents: { list: [{ id: 'ops', tools: { message: { actions: { allow: ALL } } } }] }, channels: { discord: { token: 't', actions: { pins: false } } } };
  const discordGroups = (groups: Record<string, boolean>) => ({ tools: { message: { actions: { allow: ALL } } }, channels: { discord: { token: 't', actions: groups } } });
  const slackGroups = (groups: Record<string, boolean>) => ({ tools: { message: { actions: { allow: ALL } } }, channels: { slack: { botToken: 'xoxb-fake', appToken: 'xapp-1-fake', actions: groups } } });
  const rows: Array<[string, Record<string, unknown>, 'discord' | 'slack', () => MessageArgs, Partial<TurnContext>, RegExp]> = [
    ["a narrowed agent's delete, the global list being every action", OPS_NARROW, 'discord', () => ({ action: 'delete', messageId: ownDiscord() }), { agentId: 'ops', senderIsOwner: true }, /"delete" is not enabled \(agents\.list\[1\]\.tools\.message\.actions\.allow: send\)/],
    ["a narrowed agent's read of another channel, as an owner", OPS_NARROW, 'discord', () => ({ action: 'read', channel: GENERAL }), { agentId: 'ops', senderIsOwner: true }, /"read" is not enabled/],
    ["a narrowed agent's reaction on Slack", OPS_NARROW, 'slack', () => ({ action: 'react', messageId: slackPost(), emoji: 'eyes' }), { agentId: 'ops' }, /"react" is not enabled/],
    ['a wide agent still under the platform group', OPS_WIDE_PINS_OFF, 'discord', () => ({ action: 'pin', messageId: ownDiscord() }), { agentId: 'ops' }, /channels\.discord\.actions\.pins: false/],
    ['deleting its own message with Discord messages off', discordGroups({ messages: false }), 'discord', () => ({ action: 'delete', messageId: ownDiscord() }), { senderIsOwner: true }, /channels\.discord\.actions\.messages: false/],
    ['downloading a file with Discord messages off', discordGroups({ messages: false }), 'discord', () => ({ action: 'download-file', messageId: ownDiscord(), fileId: '1' }), {}, /channels\.discord\.actions\.messages: false/],
    ['reacting with Discord reactions off', discordGroups({ reactions: false }), 'discord', () => ({ action: 'react', messageId: ownDiscord(), emoji: '👍' }), {}, /channels\.discord\.actions\.reactions: false/],
    ['a thread with Discord threads off', discordGroups({ threads: false }), 'discord', () => ({ action: 'thread-create', name: 'x' }), {}, /channels\.discord\.actions\.threads: false/],
    ['a poll with Discord polls off', discordGroups({ polls: false }), 'discord', () => ({ action: 'poll', question: 'q?', options: ['a', 'b'] }), {}, /channels\.discord\.actions\.polls: false/],
    ['a Slack poll with Slack messages off (a poll is a message there)', slackGroups({ messages: false }), 'slack', () => ({ action: 'poll', question: 'q?', options: ['a', 'b'] }), {}, /channels\.slack\.actions\.messages: false/],
    ['reading Slack history with Slack messages off, as an owner', slackGroups({ messages: false }), 'slack', () => ({ action: 'read' }), { senderIsOwner: true }, /channels\.slack\.actions\.messages: false/],
    ['pinning on Slack with Slack pins off', slackGroups({ pins: false }), 'slack', () => ({ action: 'pin', messageId: slackPost() }), {}, /channels\.slack\.actions\.pins: false/],
  ];
  const ownDiscord = () => {
    const m = discord.userMessage({ author: alice, channelId: DEV, content: 'the bot said' })!;
    const stored = { ...m, id: String(BigInt(m.id) + 2000n), author: discord.bot };
    discord.messages.set(stored.id, stored);
    return stored.id;
  };
  const slackPost = () => String(slack.messageEvent({ user: 'U0000BOB', channel: 'C0000DEV', text: 'x' }).ts);

  it.each(rows)('%s', async (_attack, raw, platform, args, over, refusal) => {
    const parsed = parseConfig(raw);
    if (!parsed.ok) throw parsed.error;
    const tool = createMessageTool(parsed.value.config, messagingFor([discordAdapter, slackAdapter]));
    const made = args();
    const fromDiscord = discord.requests.records.length;
    const fromSlack = slack.requests.records.length;
    const turn = platform === 'discord' ? discordTurn : slackTurn;
    const result = (await tool.execute(made, { turn: { ...turn, ...over }, workspaceDir: workspace } as unknown as ToolCallContext)) as ToolResult;
    const text = (result.content[0] as { text: string }).text;
    expect(result.isError, text).toBe(true);
    expect(text).toMatch(refusal);
    // Refused by the gate: nothing was asked of either platform.
    expect(discord.requests.records.slice(fromDiscord)).toEqual([]);
    expect(slack.requests.records.slice(fromSlack)).toEqual([]);
  });

  it('the same calls go through where the agent and the platform allow them', async () => {
    const wide = parseConfig(OPS_WIDE_PINS_OFF);
    if (!wide.ok) throw wide.error;
    const tool = createMessageTool(wide.value.config, messagingFor([discordAdapter, slackAdapter]));
    const run = async (args: MessageArgs, turn: TurnContext) => (await tool.execute(args, { turn, workspaceDir: workspace } as unknown as ToolCallContext)) as ToolResult;
    // Discord pins are off, Discord reactions are not; Slack's pins are untouched by Discord's group.
    expect((await run({ action: 'react', messageId: ownDiscord(), emoji: '👍' }, { ...discordTurn, agentId: 'ops' })).isError).toBeFalsy();
    expect((await run({ action: 'pin', messageId: slackPost() }, { ...slackTurn, agentId: 'ops' })).isError).toBeFalsy();
    // The default agent keeps the global list (send only).
    expect((await run({ action: 'react', messageId: ownDiscord(), emoji: '👍' }, discordTurn)).isError).toBe(true);
  });
});

describe('message actions under the approval rules', () => {
  it('a rule can match an action by its argument, as any call', () => {
    const parsed = parseConfig({ approvals: { rules: [{ tool: 'message', match: { action: 'delete' } }] } });
    if (!parsed.ok) throw parsed.error;
    const turn = { provider: 'discord', agentId: 'main', channelId: DEV };
    expect(approvalRuleFor(parsed.value.config, { tool: 'message', params: { action: 'delete', messageId: '1' }, turn })?.path).toBe('approvals.rules[0]');
    expect(approvalRuleFor(parsed.value.config, { tool: 'message', params: { action: 'react', messageId: '1', emoji: '👍' }, turn })).toBeUndefined();
  });
});
