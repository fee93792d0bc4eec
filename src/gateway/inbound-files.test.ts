import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_KEY, startFakeMediaServer, type FakeMediaServer } from '../../test/fakes/media/understanding-fake.js';
import { parseConfig } from '../config/index.js';
import { formatUnderstanding, understandAttachments } from '../media-understanding/index.js';
import { TtlCache } from '../util/ttl-cache.js';
import { takeInFiles } from './inbound-files.js';
import type { InboundAttachment } from './types.js';

let fake: FakeMediaServer;
beforeAll(async () => {
  fake = await startFakeMediaServer();
});
afterAll(() => fake.close());

const PUBLIC = '93.184.215.14';
const net = { resolve: async () => [{ address: PUBLIC, family: 4 as const }], dial: (a: string) => (a === PUBLIC ? '127.0.0.1' : a) };
const voice: InboundAttachment = {
  id: 'v1',
  name: 'voice-message.ogg',
  mimeType: 'audio/ogg',
  voice: true,
  download: async () => ({ ok: true, data: Buffer.concat([Buffer.from('OggS'), Buffer.alloc(4000, 1)]) }),
};

describe('voice messages with tools.media.audio', () => {
  it('are transcribed through the media understanding module, the transcript marked untrusted', async () => {
    const parsed = parseConfig({ tools: { media: { models: [{ provider: 'openai', model: 'gpt-4o-transcribe', capabilities: ['audio'], baseUrl: `http://api.media.test:${fake.port}/v1` }] } } });
    if (!parsed.ok) throw parsed.error;
    const workspaceDir = mkdtempSync(path.join(tmpdir(), 'warden-voice-'));
    const taken = await takeInFiles([voice], {
      workspaceDir,
      vision: true,
      transcribe: async (file) => {
        const [o] = await understandAttachments([{ id: file.id, name: file.name, contentType: file.mimeType, data: file.data }], {
          config: parsed.value.config,
          turn: { agentId: 'main', provider: 'discord', chat: 'dm', senderId: 'u1', senderIsOwner: false, spawnDepth: 0 },
          sessionKey: 'agent:main:discord:direct:u1',
          workspaceDir,
          env: { OPENAI_API_KEY: MEDIA_KEY },
          net,
          cache: new TtlCache<string>(),
          log: pino({ level: 'silent' }),
        });
        return o?.status === 'understood' ? { ok: true, text: formatUnderstanding([o]) } : { ok: false, why: 'no' };
      },
    });
    expect(taken.notes[0]).toMatch(/^\[voice message voice-message\.ogg, saved as inbox\/[^\]]+\]\n\[Audio\]\n<untrusted-[0-9a-f]{32} source="media:openai\/gpt-4o-transcribe">\nTranscript: transcript of/);
  });

  it('without it, are named as not transcribed', async () => {
    const taken = await takeInFiles([voice], { workspaceDir: mkdtempSync(path.join(tmpdir(), 'warden-voice-')), vision: true });
    expect(taken.notes[0]).toMatch(/it is not transcribed: no speech-to-text model is configured \(tools\.media\.audio\)\]$/);
  });
});
