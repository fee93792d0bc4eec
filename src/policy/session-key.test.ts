import { describe, expect, it } from 'vitest';
import { parseSessionKey, sessionKeyFor } from './session-key.js';
import type { InboundMessage } from '../gateway/types.js';

type Shape = Pick<InboundMessage, 'provider' | 'chatType' | 'channelId' | 'threadId' | 'senderId'> & Partial<Pick<InboundMessage, 'sessionId'>>;

describe('sessionKeyFor', () => {
  const cases: Array<{ name: string; agent: string; msg: Shape; key: string }> = [
    {
      name: 'guild channel',
      agent: 'main',
      msg: { provider: 'discord', chatType: 'channel', channelId: '300000000000000002', senderId: '400000000000000001' },
      key: 'agent:main:discord:channel:300000000000000002',
    },
    {
      name: 'thread under its parent channel',
      agent: 'main',
      msg: { provider: 'slack', chatType: 'thread', channelId: 'C0000DEV', threadId: '1700000001.000100', senderId: 'U1' },
      key: 'agent:main:slack:channel:c0000dev:thread:1700000001.000100',
    },
    {
      name: 'DM is per user, not per DM channel',
      agent: 'main',
      msg: { provider: 'slack', chatType: 'dm', channelId: 'D0001', senderId: 'U0000ALICE' },
      key: 'agent:main:slack:direct:u0000alice',
    },
    {
      name: 'web chat local user',
      agent: 'ops',
      msg: { provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'local' },
      key: 'agent:ops:web:direct:local',
    },
    {
      name: 'a colon inside an id cannot forge a segment',
      agent: 'main',
      msg: { provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'x:thread:y' },
      key: 'agent:main:web:direct:x%3athread%3ay',
    },
    {
      name: 'a fresh web session (/new) adds its id to the DM key',
      agent: 'main',
      msg: { provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'local', sessionId: 'M3X9A2' },
      key: 'agent:main:web:direct:local:session:m3x9a2',
    },
    {
      name: 'a session id cannot forge a segment either',
      agent: 'main',
      msg: { provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'local', sessionId: 'a:thread:b' },
      key: 'agent:main:web:direct:local:session:a%3athread%3ab',
    },
    {
      name: 'a session id outside a DM changes nothing',
      agent: 'main',
      msg: { provider: 'discord', chatType: 'channel', channelId: '5', senderId: '6', sessionId: 'x' },
      key: 'agent:main:discord:channel:5',
    },
    {
      name: 'thread without a thread id falls back to the channel',
      agent: 'main',
      msg: { provider: 'discord', chatType: 'thread', channelId: '5', senderId: '6' },
      key: 'agent:main:discord:channel:5',
    },
  ];
  it.each(cases)('$name', ({ agent, msg, key }) => {
    expect(sessionKeyFor(agent, msg)).toBe(key);
  });

  it('gives two users in DMs two different sessions', () => {
    const a = sessionKeyFor('main', { provider: 'discord', chatType: 'dm', channelId: 'dm-shared', senderId: '1' });
    const b = sessionKeyFor('main', { provider: 'discord', chatType: 'dm', channelId: 'dm-shared', senderId: '2' });
    expect(a).not.toBe(b);
  });
});

describe('parseSessionKey', () => {
  it.each([
    ['agent:main:discord:channel:42', { agentId: 'main', provider: 'discord', kind: 'channel', peerId: '42' }],
    ['agent:main:slack:channel:c1:thread:17.1', { agentId: 'main', provider: 'slack', kind: 'channel', peerId: 'c1', threadId: '17.1' }],
    ['agent:main:web:direct:local', { agentId: 'main', provider: 'web', kind: 'direct', peerId: 'local' }],
    ['agent:main:web:direct:local:session:m3x9', { agentId: 'main', provider: 'web', kind: 'direct', peerId: 'local', sessionId: 'm3x9' }],
    ['agent:main:discord:channel:42:session:x', undefined],
    ['agent:main:main', undefined],
  ])('%s', (key, parts) => {
    expect(parseSessionKey(key)).toEqual(parts);
  });
});
