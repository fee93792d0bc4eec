import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../config/index.js';
import type { TurnContext } from '../../../policy/context.js';
import type { MessageTarget } from '../../types.js';
import { decideMessageAction, ownMessageRefusal, parseChannelId, parseEmoji, parseMessageId, type ChannelKind, type MessageAction } from './actions.js';
import { messageTargetAllowed } from './message.js';

const configOf = (raw: unknown) => {
  const r = parseConfig(raw);
  if (!r.ok) throw r.error;
  return r.value.config;
};
const ALL = { tools: { message: { actions: { allow: ['*'] } } } };
const turn: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', guildId: 'G', channelId: '300000000000000003', channelName: 'dev', senderId: '400000000000000001', senderIsOwner: false, spawnDepth: 0 };
const HERE = '300000000000000003';
const OTHER = '300000000000000009';
const at = (channel: string, extra: Partial<MessageTarget> = {}): MessageTarget => ({ provider: 'discord', channel, ...extra });

describe('the message action gate', () => {
  // [case, config, action, target, turn overrides, what the platform says the target is, refusal or null]
  it.each<[string, unknown, MessageAction, MessageTarget, Partial<TurnContext>, ChannelKind | undefined, string | null]>([
    ['send is on by default', {}, 'send', at(HERE), {}, undefined, null],
    ['other actions are off by default', {}, 'react', at(HERE), {}, undefined, 'the message action "react" is not enabled (tools.message.actions.allow: send)'],
    ['off by default for owners too', {}, 'delete', at(HERE), { senderIsOwner: true }, undefined, 'the message action "delete" is not enabled (tools.message.actions.allow: send)'],
    ['enabled by name', { tools: { message: { actions: { allow: ['send', 'react'] } } } }, 'react', at(HERE), {}, undefined, null],
    ['one enabled, another still off', { tools: { message: { actions: { allow: ['react'] } } } }, 'read', at(HERE), {}, undefined, 'the message action "read" is not enabled (tools.message.actions.allow: react)'],
    ['an empty list turns send off too', { tools: { message: { actions: { allow: [] } } } }, 'send', at(HERE), {}, undefined, 'the message action "send" is not enabled (tools.message.actions.allow: none)'],
    ['* is every action', ALL, 'download-file', at(HERE), {}, undefined, null],
    ['the web chat only posts', ALL, 'react', { provider: 'web', channel: 'w1' }, { provider: 'web', channelId: 'w1' }, undefined, 'the message action "react" is not available on web'],
    ['actions take a channel, not a user', ALL, 'read', { provider: 'discord', userId: '400000000000000002' }, {}, undefined, 'the message action "read" takes a channel id, not a user'],
    ['the thread this turn runs in is this conversation', ALL, 'pin', at('300000000000000004'), { chat: 'thread', threadId: '300000000000000004' }, undefined, null],
    ['another channel the platform does not know', { ...ALL }, 'react', at(OTHER), { senderIsOwner: true }, undefined, 'discord does not know the channel 300000000000000009 here'],
    ['another channel, not in allowedTargets', ALL, 'react', at(OTHER), {}, 'channel', 'posting to discord:300000000000000009 is not allowed from here: only this conversation, or a target in tools.message.allowedTargets'],
    ['another channel in allowedTargets', { tools: { message: { actions: { allow: ['*'] }, allowedTargets: [`discord:${OTHER}`] } } }, 'react', at(OTHER), {}, 'channel', null],
    ['reading another channel an owner may post to', ALL, 'read', at(OTHER), { senderIsOwner: true }, 'channel', null],
    ['reading elsewhere with visibility self', { tools: { message: { actions: { allow: ['*'] } }, sessions: { visibility: 'self' } } }, 'read', at(OTHER), { senderIsOwner: true }, 'channel', 'reading another conversation is off here (tools.sessions.visibility: self)'],
    ['downloading elsewhere with visibility tree', { tools: { message: { actions: { allow: ['*'] } }, sessions: { visibility: 'tree' } } }, 'download-file', at(OTHER), { senderIsOwner: true }, 'channel', 'reading another conversation is off here (tools.sessions.visibility: tree)'],
    ['visibility self still lets a turn read its own conversation', { tools: { message: { actions: { allow: ['*'] } }, sessions: { visibility: 'self' } } }, 'read', at(HERE), {}, undefined, null],
    ['visibility does not stop a reaction elsewhere', { tools: { message: { actions: { allow: ['*'] }, allowedTargets: ['*'] }, sessions: { visibility: 'self' } } }, 'react', at(OTHER), {}, 'channel', null],
    ["another person's DM, not an owner", { tools: { message: { actions: { allow: ['*'] }, allowedTargets: ['*'] } } }, 'read', at(OTHER), {}, 'dm', "another conversation's direct messages are for owners only"],
    ["another person's DM, an owner", ALL, 'read', at(OTHER), { senderIsOwner: true }, 'dm', null],
    ['crossContext holds for every action', { tools: { message: { actions: { allow: ['*'] }, crossContext: { allowWithinProvider: false } } } }, 'pin', at(OTHER), { senderIsOwner: true }, 'channel', 'posting outside this conversation on discord is turned off (tools.message.crossContext.allowWithinProvider: false)'],
    ['crossContext across providers', { tools: { message: { actions: { allow: ['*'] }, crossContext: { allowAcrossProviders: false } } } }, 'read', { provider: 'slack', channel: 'C1' }, { senderIsOwner: true }, 'channel', 'posting from discord to slack is turned off (tools.message.crossContext.allowAcrossProviders: false)'],
    ['a same-id channel on another platform is not this conversation', ALL, 'delete', { provider: 'slack', channel: HERE }, {}, 'channel', 'posting to slack:300000000000000003 is not allowed from here: only this conversation, or a target in tools.message.allowedTargets'],
  ])('%s', (_name, raw, action, target, over, kind, refusal) => {
    const decided = decideMessageAction(configOf(raw), action, target, { ...turn, ...over }, kind, messageTargetAllowed);
    expect(decided).toEqual(refusal === null ? { ok: true } : { ok: false, why: refusal });
  });

  // The per-agent allowlist and OpenClaw's per-platform action groups, inside the same gate.
  const AGENTS = (tools: unknown, global: unknown = {}) => ({ ...(global as object), agents: { list: [{ id: 'main' }, { id: 'ops', tools }] } });
  const SLACK_HERE: MessageTarget = { provider: 'slack', channel: 'C0000DEV' };
  const slackTurn: Partial<TurnContext> = { provider: 'slack', channelId: 'C0000DEV', guildId: 'T1' };
  it.each<[string, unknown, MessageAction, MessageTarget, Partial<TurnContext>, string | null]>([
    ["an agent's own list replaces the global one (wider)", AGENTS({ message: { actions: { allow: ['react'] } } }), 'react', at(HERE), { agentId: 'ops' }, null],
    ["an agent's own list replaces the global one (narrower)", AGENTS({ message: { actions: { allow: ['send'] } } }, ALL), 'read', at(HERE), { agentId: 'ops' }, 'the message action "read" is not enabled (agents.list[1].tools.message.actions.allow: send)'],
    ["an agent's empty list turns send off for it", AGENTS({ message: { actions: { allow: [] } } }, ALL), 'send', at(HERE), { agentId: 'ops' }, 'the message action "send" is not enabled (agents.list[1].tools.message.actions.allow: none)'],
    ["another agent keeps the global list", AGENTS({ message: { actions: { allow: ['*'] } } }), 'react', at(HERE), { agentId: 'main' }, 'the message action "react" is not enabled (tools.message.actions.allow: send)'],
    ["an agent's crossContext alone leaves the global list", AGENTS({ message: { crossContext: { allowWithinProvider: false } } }, ALL), 'react', at(HERE), { agentId: 'ops' }, null],
    ['discord reactions group off', { ...ALL, channels: { discord: { token: 't', actions: { reactions: false } } } }, 'react', at(HERE), {}, 'the message action "react" is turned off on discord (channels.discord.actions.reactions: false)'],
    ['discord messages group off: read, edit, delete, download-file', { ...ALL, channels: { discord: { token: 't', actions: { messages: false } } } }, 'delete', at(HERE), {}, 'the message action "delete" is turned off on discord (channels.discord.actions.messages: false)'],
    ['discord messages group off leaves send (the tool’s post)', { ...ALL, channels: { discord: { token: 't', actions: { messages: false } } } }, 'send', at(HERE), {}, null],
    ['discord threads group off', { ...ALL, channels: { discord: { token: 't', actions: { threads: false } } } }, 'thread-reply', at(HERE), {}, 'the message action "thread-reply" is turned off on discord (channels.discord.actions.threads: false)'],
    ['discord pins group off', { ...ALL, channels: { discord: { token: 't', actions: { pins: false } } } }, 'list-pins', at(HERE), {}, 'the message action "list-pins" is turned off on discord (channels.discord.actions.pins: false)'],
    ['discord polls group off', { ...ALL, channels: { discord: { token: 't', actions: { polls: false } } } }, 'poll', at(HERE), {}, 'the message action "poll" is turned off on discord (channels.discord.actions.polls: false)'],
    ['a group set true does not widen the allowlist', { channels: { discord: { token: 't', actions: { reactions: true } } } }, 'react', at(HERE), {}, 'the message action "react" is not enabled (tools.message.actions.allow: send)'],
    ["discord's groups do not reach slack", { ...ALL, channels: { discord: { token: 't', actions: { reactions: false } } } }, 'react', SLACK_HERE, slackTurn, null],
    ['slack threads and polls are messages', { ...ALL, channels: { slack: { botToken: 'xoxb-1', appToken: 'xapp-1', actions: { messages: false } } } }, 'poll', SLACK_HERE, slackTurn, 'the message action "poll" is turned off on slack (channels.slack.actions.messages: false)'],
    ['slack pins group off', { ...ALL, channels: { slack: { botToken: 'xoxb-1', appToken: 'xapp-1', actions: { pins: false } } } }, 'unpin', SLACK_HERE, slackTurn, 'the message action "unpin" is turned off on slack (channels.slack.actions.pins: false)'],
    ['the group of the target platform decides, not the turn’s', { ...ALL, channels: { slack: { botToken: 'xoxb-1', appToken: 'xapp-1', actions: { reactions: false } } } }, 'react', at(HERE), {}, null],
  ])('%s', (_name, raw, action, target, over, refusal) => {
    const decided = decideMessageAction(configOf(raw), action, target, { ...turn, ...over }, undefined, messageTargetAllowed);
    expect(decided).toEqual(refusal === null ? { ok: true } : { ok: false, why: refusal });
  });

  it.each<[string, unknown, string]>([
    ['an unknown discord group', { channels: { discord: { token: 't', actions: { kick: false } } } }, 'channels.discord.actions.kick'],
    ["an OpenClaw group Warden has no actions for, turned on", { channels: { discord: { token: 't', actions: { moderation: true } } } }, 'channels.discord.actions.moderation'],
    ['a discord-only group on slack', { channels: { slack: { botToken: 'xoxb-1', appToken: 'xapp-1', actions: { polls: false } } } }, 'channels.slack.actions.polls'],
    ['a group that is not a boolean', { channels: { slack: { botToken: 'xoxb-1', appToken: 'xapp-1', actions: { pins: 'no' } } } }, 'channels.slack.actions.pins'],
    ["a bad action in an agent's list", { agents: { list: [{ id: 'ops', tools: { message: { actions: { allow: ['ban'] } } } }] } }, 'agents.list[0].tools.message.actions.allow[0]'],
  ])('refuses %s at load, naming the key', (_name, raw, path) => {
    const r = parseConfig(raw);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.problems[0]!.path).toBe(path);
  });

  it("accepts OpenClaw's other groups turned off (what Warden does anyway)", () => {
    expect(parseConfig({ channels: { discord: { token: 't', actions: { moderation: false, roles: false, presence: false } }, slack: { botToken: 'xoxb-1', appToken: 'xapp-1', actions: { memberInfo: false, emojiList: false } } } }).ok).toBe(true);
  });

  it('is the same decision for an allowlist with and without *', () => {
    const star = configOf(ALL);
    const named = configOf({ tools: { message: { actions: { allow: ['send', 'react', 'thread-create', 'thread-reply', 'pin', 'unpin', 'list-pins', 'poll', 'edit', 'delete', 'read', 'download-file'] } } } });
    for (const action of ['react', 'read', 'delete'] as const) expect(decideMessageAction(star, action, at(HERE), turn, undefined, messageTargetAllowed)).toEqual(decideMessageAction(named, action, at(HERE), turn, undefined, messageTargetAllowed));
  });

  it('names the key path of a bad action in the config', () => {
    const r = parseConfig({ tools: { message: { actions: { allow: ['send', 'ban'] } } } });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.problems[0]!.path).toBe('tools.message.actions.allow[1]');
  });
});

describe('what the model may name', () => {
  it.each<[string, string, string, string | null]>([
    ['a Discord snowflake', 'discord', '300000000000000003', '300000000000000003'],
    ["OpenClaw's channel: prefix", 'discord', 'channel:300000000000000003', '300000000000000003'],
    ['a user: target is not a channel', 'discord', 'user:400000000000000001', null],
    ['a mention is not a channel', 'discord', '<#300000000000000003>', null],
    ['a name is not an id', 'discord', '#general', null],
    ['a path in an id', 'discord', '300000000000000003/messages', null],
    ['a Slack channel id', 'slack', 'C0000GEN', 'C0000GEN'],
    ['a Slack DM id', 'slack', 'D0000ALICE', 'D0000ALICE'],
    ['a Slack user id is not a channel', 'slack', 'U0000ALICE', null],
    ['lowercase is not a Slack id', 'slack', 'c0000gen', null],
  ])('channel: %s', (_name, provider, raw, id) => {
    const parsed = parseChannelId(provider, raw);
    expect(parsed.ok ? parsed.id : null).toBe(id);
  });

  it.each<[string, string, string, boolean]>([
    ['a Discord message id', 'discord', '500000000000000041', true],
    ['a Discord id with a query', 'discord', '500000000000000041?x=1', false],
    ['a Slack ts', 'slack', '1700000013.000013', true],
    ['a Slack ts without micros', 'slack', '1700000013', false],
    ['a Slack ts with a path', 'slack', '1700000013.000013/../x', false],
  ])('message id: %s', (_name, provider, raw, ok) => {
    expect(parseMessageId(provider, raw).ok).toBe(ok);
  });

  it.each<[string, string, string, string | null]>([
    ['a Unicode emoji', 'discord', '👍', '👍'],
    ['a ZWJ sequence', 'discord', '🏳️‍🌈', '🏳️‍🌈'],
    ['a keycap', 'discord', '1️⃣', '1️⃣'],
    ['a custom emoji, bare', 'discord', 'party:123456789012345678', 'party:123456789012345678'],
    ['a custom emoji, as a mention', 'discord', '<:party:123456789012345678>', 'party:123456789012345678'],
    ['an animated custom emoji', 'discord', '<a:dance:123456789012345678>', 'dance:123456789012345678'],
    ['a huge string of emoji', 'discord', '👍'.repeat(40), null],
    ['words are not an emoji', 'discord', 'thumbs up', null],
    ['a path in a custom emoji', 'discord', 'x:1/../../guilds', null],
    ['digits alone', 'discord', '123', null],
    ['a Slack shortcode', 'slack', 'thumbsup', 'thumbsup'],
    ['a Slack shortcode with colons', 'slack', ':white_check_mark:', 'white_check_mark'],
    ['a Slack name with a space', 'slack', 'thumbs up', null],
    ['a Slack name too long', 'slack', 'a'.repeat(101), null],
  ])('emoji: %s', (_name, provider, raw, emoji) => {
    const parsed = parseEmoji(provider, raw);
    expect(parsed.ok ? parsed.emoji : null).toBe(emoji);
  });
});

describe('edit and delete: the bot\'s own messages only', () => {
  it.each<[string, string | undefined, string | undefined, string | undefined]>([
    ['its own message', 'BOT', 'BOT', undefined],
    ["a person's message", 'U1', 'BOT', 'refused: the message was not posted by this bot; it may delete only its own messages'],
    ['an author the platform did not report', undefined, 'BOT', 'cannot delete the message: its author could not be verified'],
    ['the bot not yet known', 'BOT', undefined, 'cannot delete the message: its author could not be verified'],
  ])('%s', (_name, author, bot, refusal) => {
    expect(ownMessageRefusal('delete', author, bot)).toBe(refusal);
  });
});
