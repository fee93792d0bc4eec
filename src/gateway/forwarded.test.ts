import { describe, expect, it } from 'vitest';
import { decodeForwarded, encodeForwarded, forwardable } from './forwarded.js';
import type { Route } from './router.js';

const route: Route = {
  agentId: 'main',
  sessionKey: 'agent:main:slack:direct:u1',
  context: { agentId: 'main', provider: 'slack', chat: 'dm', senderId: 'U1', senderIsOwner: false, spawnDepth: 0 },
  replyTo: { provider: 'slack', channelId: 'D1', threadId: '1.2' },
  text: 'hello',
  access: 'allowed by dm policy',
  binding: { agentId: 'main', matchedBy: 'default' },
};

describe('which messages run on another instance than the one they reached', () => {
  it.each([
    ['a plain Slack message', { provider: 'slack' as const }, true],
    ['a plain Discord message', { provider: 'discord' as const, attachments: [] }, true],
    ['a message with a file (its download is the receiving adapter\'s)', { provider: 'slack' as const, attachments: [{ id: 'F1', name: 'a.png', download: async () => ({ ok: false as const, error: 'x' }) }] }, false],
    ['a native slash command (answered through its invocation)', { provider: 'discord' as const, invocationId: 'i-1' }, false],
    ['the web chat (its socket is in the receiving process)', { provider: 'web' as const }, false],
  ])('%s: %s', (_label, message, expected) => {
    expect(forwardable(message)).toBe(expected);
  });
});

describe('a forwarded message as recorded', () => {
  it('comes back as the route the receiving instance decided, without files', () => {
    const decoded = decodeForwarded(encodeForwarded({ ...route, attachments: [{ id: 'F', name: 'f', download: async () => ({ ok: false, error: '' }) }] }));
    expect(decoded).toEqual({ ok: true, route });
  });

  it.each([
    ['not JSON', '{', 'payload: not JSON'],
    ['another version', JSON.stringify({ v: 2, route }), 'payload.v: not 1'],
    ['no route', JSON.stringify({ v: 1 }), 'payload.route: missing'],
    ['a session key that is not a string', JSON.stringify({ v: 1, route: { ...route, sessionKey: 7 } }), 'payload.route.sessionKey: not a string'],
    ['no context', JSON.stringify({ v: 1, route: { ...route, context: null } }), 'payload.route.context: missing'],
    ['a reply target without its channel', JSON.stringify({ v: 1, route: { ...route, replyTo: { provider: 'slack' } } }), 'payload.route.replyTo: missing its provider or channelId'],
  ])('refuses %s, naming the key', (_label, payload, error) => {
    expect(decodeForwarded(payload)).toEqual({ ok: false, error });
  });
});
