import { describe, expect, it } from 'vitest';
import { cardDestinations } from './adapter-deps.js';

describe('cardDestinations', () => {
  const approvers = ['A', 'B', 'A'];
  it.each([
    { target: 'channel', from: 'discord', channel: true, dms: [] },
    { target: 'dm', from: 'discord', channel: false, dms: ['A', 'B'] },
    { target: 'both', from: 'discord', channel: true, dms: ['A', 'B'] },
    // Asked on another platform: the channel id means nothing here, so approvers get DMs.
    { target: 'channel', from: 'slack', channel: false, dms: ['A', 'B'] },
    { target: 'both', from: 'web', channel: false, dms: ['A', 'B'] },
  ] as const)('target $target, request from $from', ({ target, from, channel, dms }) => {
    const out = cardDestinations({ provider: from, channelId: 'C1', threadId: 'T1' }, 'discord', { approvers, approvalsTarget: target });
    expect(out.channel).toEqual(channel ? { channelId: 'C1', threadId: 'T1' } : undefined);
    expect(out.dmUserIds).toEqual(dms);
  });
});
