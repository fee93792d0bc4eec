import { describe, expect, it } from 'vitest';
import { deliveryKeys, inboundFromSlack, inboundFromSlackCommand, type SlackMessageEvent } from './inbound.js';

const context = { teamId: 'T1', botUserId: 'UBOT', botId: 'BBOT', channelName: 'general' };
const base: SlackMessageEvent = { type: 'message', channel: 'C1', channel_type: 'channel', user: 'UA', text: 'hi', ts: '1700000001.000100' };

describe('inboundFromSlack', () => {
  it.each([
    { name: 'channel message', event: base, expected: { chatType: 'channel', channelId: 'C1', channelName: 'general', threadId: undefined, mentionsBot: false } },
    { name: 'DM', event: { ...base, channel: 'D1', channel_type: 'im' }, expected: { chatType: 'dm', channelId: 'D1', channelName: undefined } },
    { name: 'thread reply', event: { ...base, thread_ts: '1700000000.000001' }, expected: { chatType: 'thread', threadId: '1700000000.000001' } },
    { name: 'thread root (thread_ts = ts)', event: { ...base, thread_ts: base.ts }, expected: { chatType: 'channel', threadId: undefined } },
    { name: 'mention in text', event: { ...base, text: '<@UBOT> run it' }, expected: { mentionsBot: true, text: '<@UBOT> run it' } },
    { name: 'app_mention', event: { ...base, type: 'app_mention', channel_type: undefined }, expected: { mentionsBot: true, chatType: 'channel' } },
    { name: 'thread broadcast', event: { ...base, subtype: 'thread_broadcast' }, expected: { chatType: 'channel' } },
  ])('$name', ({ event, expected }) => {
    expect(inboundFromSlack(event, context)).toMatchObject({ provider: 'slack', guildId: 'T1', senderId: 'UA', messageId: base.ts, receivedAt: 1_700_000_001_000, ...expected });
  });

  it.each([
    { name: 'its own message', event: { ...base, user: 'UBOT' } },
    { name: 'its own bot id', event: { ...base, user: undefined, bot_id: 'BBOT', subtype: 'bot_message' } },
    { name: 'an edit', event: { ...base, subtype: 'message_changed' } },
    { name: 'a join', event: { ...base, subtype: 'channel_join' } },
    { name: 'no user', event: { ...base, user: undefined } },
  ])('ignores $name', ({ event }) => {
    expect(inboundFromSlack(event, context)).toBeUndefined();
  });
});

describe('inboundFromSlack: bots come through marked, for the access gate', () => {
  it.each([
    { name: 'another bot with a user', event: { ...base, bot_id: 'B9' }, sender: 'UA' },
    { name: 'a bot_message without a user', event: { ...base, user: undefined, bot_id: 'B9', subtype: 'bot_message' }, sender: 'B9' },
  ])('$name', ({ event, sender }) => {
    expect(inboundFromSlack(event, { ...context, botId: 'BBOT' })).toMatchObject({ senderId: sender, senderIsBot: true });
  });
  it('a person is no bot', () => expect(inboundFromSlack(base, context)?.senderIsBot).toBeUndefined());
});

describe('inboundFromSlackCommand', () => {
  const command = { channel_id: 'C1', channel_name: 'general', user_id: 'UA', user_name: 'alice', team_id: 'T1', trigger_id: '1.2.3' };
  it.each([
    { name: 'in a channel', payload: command, looked: 'general', expected: { chatType: 'channel', channelId: 'C1', channelName: 'general', guildId: 'T1' } },
    { name: 'name from the payload when the lookup has none', payload: command, looked: undefined, expected: { chatType: 'channel', channelName: 'general' } },
    { name: 'in a DM', payload: { ...command, channel_id: 'D1', channel_name: 'directmessage' }, looked: undefined, expected: { chatType: 'dm', channelId: 'D1', channelName: undefined } },
  ])('$name', ({ payload, looked, expected }) => {
    const inbound = inboundFromSlackCommand(payload, '/tools', looked);
    expect(inbound).toMatchObject({ ...expected, provider: 'slack', senderId: 'UA', text: '/tools', mentionsBot: false, invocationId: '1.2.3' });
  });
});

describe('deliveryKeys', () => {
  const envelope = (event: object | undefined, extra: Record<string, unknown> = {}) => ({ type: 'event_callback', team_id: 'T1', event_id: 'Ev1', event, ...extra });
  it.each([
    { name: 'a message: its event id and its channel and ts', body: envelope(base), keys: ['slack:event:T1:Ev1', 'slack:message:T1:C1:1700000001.000100'] },
    { name: 'an app_mention: the same message key as its `message` twin', body: envelope({ ...base, type: 'app_mention' }, { event_id: 'Ev2' }), keys: ['slack:event:T1:Ev2', 'slack:message:T1:C1:1700000001.000100'] },
    { name: 'another event (a rename): its event id only', body: envelope({ type: 'channel_rename', channel: { id: 'C1', name: 'x' } }), keys: ['slack:event:T1:Ev1'] },
    { name: 'a message without ts: its event id only', body: envelope({ type: 'message', channel: 'C1' }), keys: ['slack:event:T1:Ev1'] },
    { name: 'a click (no event id)', body: { type: 'block_actions', actions: [] }, keys: [] },
    { name: 'a slash command', body: { command: '/warden', text: 'status' }, keys: [] },
    { name: 'a non-string event id', body: envelope(base, { event_id: 7 }), keys: [] },
    { name: 'nothing', body: undefined, keys: [] },
  ])('$name', ({ body, keys }) => {
    expect(deliveryKeys(body)).toEqual(keys);
  });
});
