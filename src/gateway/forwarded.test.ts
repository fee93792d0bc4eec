import { describe, expect, it } from 'vitest';
import { attachmentsFrom, decodeForwarded, encodeForwarded, forwardable } from './forwarded.js';
import type { AttachmentRef, InboundAttachment } from './types.js';
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

/** A file as an adapter describes it; its own download must never run on the runner. */
function file(over: Partial<AttachmentRef>): InboundAttachment {
  return { id: 'F1', name: 'a.png', ...over, download: async () => ({ ok: false as const, error: "the receiving adapter's fetch" }) };
}

describe('which messages run on another instance than the one they reached', () => {
  it.each([
    ['a plain Slack message', { provider: 'slack' as const }, true],
    ['a plain Discord message', { provider: 'discord' as const, attachments: [] }, true],
    ['a message with files the platform gave URLs for (the runner fetches them again)', { provider: 'slack' as const, attachments: [file({ url: 'https://files.slack.com/a.png' }), file({ id: 'F2', url: 'https://files.slack.com/b.txt' })] }, true],
    ['a Discord message with a file on the CDN', { provider: 'discord' as const, attachments: [file({ url: 'https://cdn.discordapp.com/attachments/1/2/a.png?ex=1' })] }, true],
    ['a file without a URL (only the receiving adapter could say why)', { provider: 'slack' as const, attachments: [file({})] }, false],
    ['one file of two without a URL', { provider: 'slack' as const, attachments: [file({ url: 'https://files.slack.com/a.png' }), file({ url: '' })] }, false],
    ['a native slash command with a file', { provider: 'discord' as const, invocationId: 'i-2', attachments: [file({ url: 'https://cdn.discordapp.com/a' })] }, false],
    ['a native slash command (answered through its invocation)', { provider: 'discord' as const, invocationId: 'i-1' }, false],
    ['the web chat (its socket is in the receiving process)', { provider: 'web' as const }, false],
  ])('%s: %s', (_label, message, expected) => {
    expect(forwardable(message)).toBe(expected);
  });
});

describe('a forwarded message as recorded', () => {
  it('comes back as the route the receiving instance decided', () => {
    expect(decodeForwarded(encodeForwarded(route))).toEqual({ ok: true, route, files: [] });
  });

  it('carries its files as the platform described them: never bytes, never the fetch', () => {
    const refs: AttachmentRef[] = [
      { id: 'F1', name: 'shot.png', mimeType: 'image/png', size: 1234, voice: false, url: 'https://files.slack.com/files-pri/T-F1/shot.png' },
      { id: 'F2', name: 'memo.m4a', voice: true, url: 'https://files.slack.com/files-pri/T-F2/memo.m4a' },
    ];
    const payload = encodeForwarded({ ...route, attachments: refs.map((r) => ({ ...r, download: async () => ({ ok: true as const, data: Buffer.from('BYTES-NOT-RECORDED') }) })) });
    expect(payload).not.toContain('BYTES-NOT-RECORDED');
    expect(payload).not.toContain('download');
    expect(decodeForwarded(payload)).toEqual({ ok: true, route, files: refs });
  });

  it.each([
    ['not JSON', '{', 'payload: not JSON'],
    ['another version', JSON.stringify({ v: 2, route }), 'payload.v: not 1'],
    ['no route', JSON.stringify({ v: 1 }), 'payload.route: missing'],
    ['a session key that is not a string', JSON.stringify({ v: 1, route: { ...route, sessionKey: 7 } }), 'payload.route.sessionKey: not a string'],
    ['no context', JSON.stringify({ v: 1, route: { ...route, context: null } }), 'payload.route.context: missing'],
    ['a reply target without its channel', JSON.stringify({ v: 1, route: { ...route, replyTo: { provider: 'slack' } } }), 'payload.route.replyTo: missing its provider or channelId'],
    ['files that are not a list', JSON.stringify({ v: 1, route: { ...route, files: { id: 'F' } } }), 'payload.route.files: not a list'],
    ['a file that is not an object', JSON.stringify({ v: 1, route: { ...route, files: ['F'] } }), 'payload.route.files[0]: not an object'],
    ['a file without its URL', JSON.stringify({ v: 1, route: { ...route, files: [{ id: 'F', name: 'a' }] } }), 'payload.route.files[0].url: not a string'],
    ['a file without a name', JSON.stringify({ v: 1, route: { ...route, files: [{ id: 'F', url: 'https://x/a', name: 3 }] } }), 'payload.route.files[0].name: not a string'],
    ['a negative size', JSON.stringify({ v: 1, route: { ...route, files: [{ id: 'F', name: 'a', url: 'https://x/a', size: -1 }] } }), 'payload.route.files[0].size: not a byte count'],
    ['a size that is text', JSON.stringify({ v: 1, route: { ...route, files: [{ id: 'F', name: 'a', url: 'https://x/a', size: '10' }] } }), 'payload.route.files[0].size: not a byte count'],
    ['a content type that is not text', JSON.stringify({ v: 1, route: { ...route, files: [{ id: 'F', name: 'a', url: 'https://x/a', mimeType: 1 }] } }), 'payload.route.files[0].mimeType: not a string'],
    ['a voice flag that is not a boolean', JSON.stringify({ v: 1, route: { ...route, files: [{ id: 'F', name: 'a', url: 'https://x/a', voice: 'yes' }] } }), 'payload.route.files[0].voice: not a boolean'],
  ])('refuses %s, naming the key', (_label, payload, error) => {
    expect(decodeForwarded(payload)).toEqual({ ok: false, error });
  });

  it('a recorded route never brings its own attachments (only files, fetched by the runner)', () => {
    const decoded = decodeForwarded(JSON.stringify({ v: 1, route: { ...route, attachments: [{ id: 'F', name: 'a', url: 'https://x/a' }] } }));
    expect(decoded).toEqual({ ok: true, route, files: [] });
  });
});

describe('the recorded files as the runner takes them in', () => {
  const refs: AttachmentRef[] = [{ id: 'F1', name: 'a.png', size: 3, url: 'https://files.slack.com/a.png' }];

  it("are fetched by the runner's adapter for the platform", async () => {
    const seen: AttachmentRef[] = [];
    const adapter = { attachmentFrom: (ref: AttachmentRef): InboundAttachment => (seen.push(ref), { ...ref, download: async () => ({ ok: true as const, data: Buffer.from('abc') }) }) };
    const files = attachmentsFrom(refs, 'slack', adapter);
    expect(seen).toEqual(refs);
    expect(files.map(({ download: _d, ...r }) => r)).toEqual(refs);
    expect(await files[0]!.download(10)).toEqual({ ok: true, data: Buffer.from('abc') });
  });

  it.each([
    ['no adapter for the platform here', undefined],
    ['an adapter that cannot fetch files', {}],
  ])('%s: each file fails to fetch, saying why', async (_label, adapter) => {
    const files = attachmentsFrom(refs, 'slack', adapter);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject(refs[0]!);
    expect(await files[0]!.download(10)).toEqual({ ok: false, error: 'this instance has no slack connection to fetch it from' });
  });
});
