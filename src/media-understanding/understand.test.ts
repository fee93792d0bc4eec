import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MEDIA_KEY, startFakeMediaServer, type FakeMediaServer } from '../../test/fakes/media/understanding-fake.js';
import type { ApprovalRequester } from '../approvals/types.js';
import { parseConfig } from '../config/index.js';
import { createExecTool } from '../tools/core/exec/exec.js';
import { TtlCache } from '../util/ttl-cache.js';
import { withoutNonces } from '../tools/untrusted-testing.js';
import { formatUnderstanding, understandAttachments, type Attachment, type UnderstandingContext } from './index.js';
import { openWardenStore } from '../app/migrations.js';
import { SYSTEM_PROMPT } from './requests.js';
import { usageReport } from '../usage/report.js';
import { UsageService } from '../usage/service.js';
import { UsageStore } from '../usage/store.js';

/**
 * tools.media against loopback fakes of the provider APIs (OpenAI-compatible transcription and
 * vision, Gemini, Anthropic, Deepgram), and cli entries through the real exec tool under
 * bubblewrap.
 */
let fake: FakeMediaServer;
const PUBLIC = '93.184.215.14';
const net = {
  resolve: async (host: string) => (host.endsWith('.test') ? [{ address: PUBLIC, family: 4 as const }] : host === 'api.openai.com' ? [{ address: '10.0.0.7', family: 4 as const }] : Promise.reject(new Error('nx'))),
  dial: (a: string) => (a === PUBLIC ? '127.0.0.1' : a),
};
beforeAll(async () => {
  fake = await startFakeMediaServer();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.splice(0);
  fake.delayEach(0);
  fake.failNext(500, 0);
});

const OGG: Attachment = { name: 'voice.ogg', contentType: 'audio/ogg', data: Buffer.concat([Buffer.from('OggS'), Buffer.alloc(4000, 1)]) };
const PNG: Attachment = { contentType: 'image/png', data: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64') };
const MP4: Attachment = { name: 'clip.mp4', data: Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(3000)]) };

const base = (p = '/v1') => `http://api.media.test:PORT${p}`;
const env = { OPENAI_API_KEY: MEDIA_KEY, GEMINI_API_KEY: MEDIA_KEY, ANTHROPIC_API_KEY: MEDIA_KEY, DEEPGRAM_API_KEY: MEDIA_KEY, GROQ_API_KEY: MEDIA_KEY };

function contextFor(media: unknown, extra: Partial<UnderstandingContext> & { tools?: Record<string, unknown> } = {}): UnderstandingContext {
  const { tools, ...rest } = extra;
  const r = parseConfig(JSON.parse(JSON.stringify({ tools: { media, ...tools } }).replaceAll(':PORT', `:${fake.port}`)));
  if (!r.ok) throw r.error;
  return {
    config: r.value.config,
    turn: { agentId: 'main', provider: 'web', chat: 'dm', senderId: 'u1', senderIsOwner: false, spawnDepth: 0 },
    sessionKey: 'agent:main:web:direct:u1',
    workspaceDir: mkdtempSync(path.join(tmpdir(), 'warden-media-')),
    env,
    net,
    cache: new TtlCache<string>(),
    log: pino({ level: 'silent' }),
    ...rest,
  };
}

describe('media understanding through provider APIs', () => {
  it('transcribes audio with an OpenAI-compatible transcription API', async () => {
    const ctx = contextFor({ models: [{ provider: 'openai', model: 'gpt-4o-transcribe', capabilities: ['audio'], baseUrl: base() }], audio: { language: 'de' } });
    const [outcome] = await understandAttachments([OGG], ctx);
    expect(outcome).toMatchObject({ status: 'understood', capability: 'audio', text: 'transcript of audio.ogg (4004 bytes) by gpt-4o-transcribe in de', by: 'openai/gpt-4o-transcribe' });
    expect(fake.requests[0]).toMatchObject({ path: '/v1/audio/transcriptions', body: { model: 'gpt-4o-transcribe', language: 'de', file: { type: 'audio/ogg' } } });
  });

  it('describes an image for a model without vision, and leaves it to a model with vision', async () => {
    const media = { models: [{ provider: 'openai', model: 'gpt-6-astra', capabilities: ['image'], baseUrl: base() }] };
    const [described] = await understandAttachments([PNG], contextFor(media));
    expect(described).toMatchObject({ status: 'understood', capability: 'image', text: expect.stringMatching(/^a image\/png picture, seen by gpt-6-astra/) });
    const [passed] = await understandAttachments([PNG], contextFor(media, { modelHasVision: true }));
    expect(passed).toEqual({ status: 'skipped', capability: 'image', reason: 'the model reads images itself' });
  });

  it.each([
    ['gemini (video, inline data)', { provider: 'google', model: 'gemini-3-flash-preview', capabilities: ['video'], baseUrl: base('/v1beta') }, MP4, 'gemini saw video/mp4'],
    ['anthropic (image)', { provider: 'anthropic', model: 'claude-opus-5', capabilities: ['image'], baseUrl: base('/v1') }, PNG, 'claude saw image/png'],
    ['deepgram (audio, provider options as query)', { provider: 'deepgram', model: 'nova-3', capabilities: ['audio'], baseUrl: base('/v1') }, OGG, 'deepgram nova-3 heard 4004 bytes (punctuate, detect_language)'],
    ['groq without a model (its default transcriber)', { provider: 'groq', capabilities: ['audio'], baseUrl: base('/openai/v1') }, OGG, 'transcript of audio.ogg (4004 bytes) by whisper-large-v3-turbo'],
    ['ollama vision on loopback (self-hosted)', { provider: 'ollama', model: 'qwen2.5vl:7b', capabilities: ['image'], baseUrl: 'http://127.0.0.1:PORT/v1' }, PNG, /seen by qwen2.5vl:7b/],
  ])('%s', async (_name, entry, attachment, text) => {
    const ctx = contextFor({ models: [entry], audio: { providerOptions: { deepgram: { detect_language: true, punctuate: true } } } });
    const [outcome] = await understandAttachments([attachment], ctx);
    expect(outcome).toMatchObject({ status: 'understood', text: typeof text === 'string' ? text : expect.stringMatching(text) });
  });

  it('falls back to the next entry when one fails, is too small for the file or has no client', async () => {
    const ctx = contextFor({
      models: [
        { provider: 'elevenlabs', model: 'scribe_v2', capabilities: ['audio'] },
        { provider: 'openai', model: 'tiny', capabilities: ['audio'], baseUrl: base(), maxBytes: 100 },
        { provider: 'openai', model: 'flaky', capabilities: ['audio'], baseUrl: base() },
        { provider: 'openai', model: 'steady', capabilities: ['audio'], baseUrl: base() },
      ],
    });
    fake.failNext(500);
    const [outcome] = await understandAttachments([OGG], ctx);
    expect(outcome).toMatchObject({ status: 'understood', by: 'openai/steady' });
    fake.failNext(500, 2);
    const [failed] = await understandAttachments([{ ...OGG, id: 'other' }], contextFor({ models: [{ provider: 'openai', model: 'a', capabilities: ['audio'], baseUrl: base() }, { provider: 'elevenlabs', capabilities: ['audio'] }] }));
    expect(failed).toEqual({
      status: 'failed',
      capability: 'audio',
      attempts: [
        { by: 'openai/a', error: 'openai answered HTTP 500' },
        { by: 'elevenlabs/(default)', error: 'Warden has no media client for provider "elevenlabs": add models.providers.elevenlabs with api: openai and baseUrl if it speaks the OpenAI API' },
      ],
    });
  });

  it('a missing key skips the entry with the variable it needs', async () => {
    const ctx = contextFor({ models: [{ provider: 'openai', model: 'm', capabilities: ['audio'], baseUrl: base() }] }, { env: {} });
    const [outcome] = await understandAttachments([OGG], ctx);
    expect(outcome).toMatchObject({ status: 'failed', attempts: [{ error: 'OPENAI_API_KEY is not set' }] });
  });

  it('results are cached per attachment', async () => {
    const ctx = contextFor({ models: [{ provider: 'openai', model: 'm', capabilities: ['audio'], baseUrl: base() }] });
    await understandAttachments([OGG], ctx);
    const [again] = await understandAttachments([OGG], ctx);
    expect(again).toMatchObject({ status: 'understood', cached: true });
    expect(fake.requests).toHaveLength(1);
  });

  it('preferredModel moves matching entries first', async () => {
    const ctx = contextFor({
      models: [
        { provider: 'openai', model: 'first', capabilities: ['image'], baseUrl: base() },
        { provider: 'google', model: 'gemini-3-flash-preview', capabilities: ['image', 'video'], baseUrl: base('/v1beta') },
      ],
      image: { preferredModel: 'google/gemini-3-flash-preview' },
    });
    const [outcome] = await understandAttachments([PNG], ctx);
    expect(outcome).toMatchObject({ by: 'google/gemini-3-flash-preview', text: 'gemini saw image/png' });
  });

  it('processes the first attachment by default, up to maxAttachments with mode all, within concurrency', async () => {
    const entry = { provider: 'openai', model: 'm', capabilities: ['audio'], baseUrl: base() };
    const three = [1, 2, 3].map((n) => ({ ...OGG, id: `a${n}`, data: Buffer.concat([OGG.data, Buffer.alloc(n)]) }));
    const first = await understandAttachments(three, contextFor({ models: [entry] }));
    expect(first.map((o) => o.status)).toEqual(['understood', 'skipped', 'skipped']);
    fake.delayEach(150);
    const all = await understandAttachments(three.map((a) => ({ ...a, id: `b${a.id}` })), contextFor({ models: [entry], concurrency: 2, audio: { attachments: { mode: 'all', maxAttachments: 3 } } }));
    expect(all.map((o) => o.status)).toEqual(['understood', 'understood', 'understood']);
    expect(fake.maxInFlight()).toBeLessThanOrEqual(2);
  });

  it('enabled: false, tiny audio and files of no media kind are skipped with a reason', async () => {
    const ctx = contextFor({ models: [{ provider: 'openai', model: 'm', capabilities: ['audio', 'image'], baseUrl: base() }], image: { enabled: false } });
    const outcomes = await understandAttachments([PNG, { contentType: 'audio/ogg', data: Buffer.from('OggS') }, { contentType: 'application/pdf', data: Buffer.from('%PDF') }], ctx);
    expect(outcomes).toEqual([
      { status: 'skipped', capability: 'image', reason: 'tools.media.image.enabled is false' },
      { status: 'skipped', capability: 'audio', reason: 'the audio is too short to hold speech (under 1 KB)' },
      { status: 'skipped', capability: undefined, reason: 'not an image, audio or video file' },
    ]);
  });

  it('a hosted default endpoint that resolves to a private address is refused', async () => {
    const ctx = contextFor({ models: [{ provider: 'openai', model: 'm', capabilities: ['audio'] }] });
    const [outcome] = await understandAttachments([OGG], ctx);
    expect(outcome).toMatchObject({ status: 'failed', attempts: [{ error: expect.stringMatching(/not reachable under the network policy.*10\.0\.0\.7/) }] });
  });

  it('echoTranscript formats the transcript for the chat, and the turn text is untrusted and labelled', async () => {
    const ctx = contextFor({ models: [{ provider: 'openai', model: 'm', capabilities: ['audio', 'image'], baseUrl: base() }], audio: { echoTranscript: true, echoFormat: '🎙 {transcript}' }, image: { attachments: { mode: 'all', maxAttachments: 2 } } });
    const outcomes = await understandAttachments([OGG, PNG, { ...PNG, id: 'second' }], ctx);
    expect(outcomes[0]).toMatchObject({ echo: expect.stringMatching(/^🎙 transcript of audio\.ogg/) });
    const text = withoutNonces(formatUnderstanding(outcomes, 'what is this?'));
    expect(text).toMatch(/^\[Audio\]\n<untrusted source="media:openai\/m">\nTranscript: transcript of audio\.ogg/);
    expect(text).toContain('[Image 1/2]');
    expect(text).toContain('[Image 2/2]');
    expect(text.match(/<\/untrusted>/g)).toHaveLength(3);
    expect(text.endsWith('User text:\nwhat is this?')).toBe(true);
  });
});

describe('cli entries run through the exec tool, never a raw spawn', () => {
  const allow: ApprovalRequester = { request: async () => ({ id: 'a1', outcome: 'allow-once', decidedBy: 'owner' }) };
  const headEntry = { type: 'cli', command: 'head', args: ['-c', '{{MaxChars}}', '{{AttachmentPath}}'], capabilities: ['audio'], maxChars: 12 };
  const sandboxed = (extra: Record<string, unknown>, exec: Record<string, unknown>) => {
    const ctx = contextFor({ models: [headEntry], ...extra }, { tools: { exec: { host: 'sandbox', ...exec } } });
    return { ...ctx, exec: createExecTool({ config: ctx.config, hasBwrap: true }) as never };
  };

  it('an allowlisted command runs in the sandbox on the staged file, which is removed afterwards', async () => {
    const ctx = sandboxed({}, { allowlist: [{ pattern: '/usr/bin/head' }] });
    const [outcome] = await understandAttachments([{ ...OGG, data: Buffer.concat([Buffer.from('OggS hello world, more words'), Buffer.alloc(2000)]) }], ctx);
    expect(outcome).toMatchObject({ status: 'understood', text: 'OggS hello w', by: 'cli:head' });
    expect(existsSync(path.join(ctx.workspaceDir, '.warden-media')) ? readdirSync(path.join(ctx.workspaceDir, '.warden-media')) : []).toEqual([]);
  });

  it('a command the allowlist does not cover needs an approval: with no one to ask it does not run', async () => {
    // head is on the sandbox's default read-only list: without it, nothing covers the entry.
    const ctx = sandboxed({}, { defaultAllowlist: false });
    const [outcome] = await understandAttachments([OGG], ctx);
    expect(outcome).toMatchObject({ status: 'failed', attempts: [{ by: 'cli:head', error: expect.stringMatching(/^the exec policy did not let head run: exec not run: the approval was cancelled/) }] });
    const approved = await understandAttachments([{ ...OGG, id: 'approved' }], { ...sandboxed({}, { defaultAllowlist: false }), approvals: allow });
    expect(approved[0]).toMatchObject({ status: 'understood' });
  });

  it('security: deny stops a cli entry even with an approver', async () => {
    const ctx = { ...sandboxed({}, { security: 'deny' }), approvals: allow };
    const [outcome] = await understandAttachments([OGG], ctx);
    expect(outcome).toMatchObject({ status: 'failed', attempts: [{ error: expect.stringMatching(/^the exec policy did not let head run: exec denied/) }] });
  });

  it('arguments stay single words: a file name cannot inject shell syntax', async () => {
    const entry = { type: 'cli', command: 'echo', args: ['{{Prompt}}'], capabilities: ['audio'], prompt: '$(touch /tmp/pwned-media); `id`' };
    const ctx = contextFor({ models: [entry] }, { tools: { exec: { host: 'sandbox', allowlist: [{ pattern: '/usr/bin/echo' }] } } });
    const [outcome] = await understandAttachments([OGG], { ...ctx, exec: createExecTool({ config: ctx.config, hasBwrap: true }) as never });
    expect(outcome).toMatchObject({ status: 'understood', text: '$(touch /tmp/pwned-media); `id`' });
    expect(existsSync('/tmp/pwned-media')).toBe(false);
  });
});

describe('media understanding is metered like a turn', () => {
  const PRICED = [
    { provider: 'openai', model: 'gpt-6-astra', capabilities: ['image'], baseUrl: base(), file: PNG, usage: { inputTokens: 85, outputTokens: 12 } },
    { provider: 'google', model: 'gemini-3-flash-preview', capabilities: ['video'], baseUrl: base('/v1beta'), file: MP4, usage: { inputTokens: 300, outputTokens: 6 } },
    { provider: 'anthropic', model: 'claude-opus-5', capabilities: ['image'], baseUrl: base('/v1'), file: PNG, usage: { inputTokens: 90, outputTokens: 7 } },
  ] as const;

  async function meter(budgets: unknown) {
    const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-media-usage-')) });
    if (!opened.ok) throw new Error(opened.error.message);
    const parsed = parseConfig({
      models: { providers: { openai: { models: [{ id: 'gpt-6-astra', cost: { input: 1, output: 2 } }, { id: 'gpt-4o-transcribe', cost: { input: 1, output: 2 } }] }, google: { api: 'gemini', models: [{ id: 'gemini-3-flash-preview', cost: { input: 1, output: 2 } }] }, anthropic: { models: [{ id: 'claude-opus-5', cost: { input: 1, output: 2 } }] } } },
      budgets,
    });
    if (!parsed.ok) throw parsed.error;
    const cfg = parsed.value.config;
    return { store: opened.store, usage: new UsageService({ store: new UsageStore(opened.store.db), config: () => cfg }) };
  }

  it.each(PRICED)('$provider: the usage the provider reported is recorded for the sender', async (entry) => {
    const { store, usage } = await meter([]);
    try {
      const { file, usage: expected, ...model } = entry;
      const [outcome] = await understandAttachments([file], contextFor({ models: [model] }, { usage }));
      expect(outcome?.status).toBe('understood');
      const report = await usageReport(store.db, { since: 0, by: 'sender' });
      expect(report.rows).toMatchObject([{ key: 'web:u1', calls: 1, inputTokens: expected.inputTokens, outputTokens: expected.outputTokens, costNano: expected.inputTokens * 1000 + expected.outputTokens * 2000 }]);
    } finally {
      await store.close();
    }
  });

  it('a transcription answered without usage is recorded by the documented estimate (the transcript, 4 characters a token)', async () => {
    const { store, usage } = await meter([]);
    try {
      const [outcome] = await understandAttachments([OGG], contextFor({ models: [{ provider: 'openai', model: 'gpt-4o-transcribe', capabilities: ['audio'], baseUrl: base() }] }, { usage }));
      expect(outcome).toMatchObject({ status: 'understood', capability: 'audio' });
      const transcript = 'transcript of audio.ogg (4004 bytes) by gpt-4o-transcribe';
      expect(outcome).toMatchObject({ text: transcript });
      const tokens = Math.ceil(transcript.length / 4);
      const report = await usageReport(store.db, { since: 0, by: 'sender' });
      expect(report.rows).toMatchObject([{ key: 'web:u1', calls: 1, inputTokens: 0, outputTokens: tokens, costNano: tokens * 2000 }]);
    } finally {
      await store.close();
    }
  });

  it('transcriptions count toward a token budget until it stops them, before any request', async () => {
    // Each transcript here is 57 characters: 15 tokens recorded. The check before a call wants
    // room for its prompt estimate (the system prompt, 4 characters a token): with the cap at
    // 30 + that, two calls are admitted and the third is refused.
    const need = Math.ceil(SYSTEM_PROMPT.length / 4);
    const cap = 30 + need;
    const { store, usage } = await meter([{ scope: 'sender', per: 'day', tokens: cap }]);
    try {
      const transcribe = (id: string) => understandAttachments([{ ...OGG, id }], contextFor({ models: [{ provider: 'openai', model: 'gpt-4o-transcribe', capabilities: ['audio'], baseUrl: base() }] }, { usage }));
      const first = (await transcribe('a'))[0];
      expect(first?.status, JSON.stringify(first)).toBe('understood');
      expect((await transcribe('b'))[0]?.status).toBe('understood');
      const before = fake.requests.length;
      const [third] = await transcribe('c');
      expect(third).toMatchObject({ status: 'failed', attempts: [{ by: 'openai/gpt-4o-transcribe', error: expect.stringContaining(`budget of ${cap} tokens per day is reached: 30 tokens spent`) }] });
      expect(fake.requests.length).toBe(before);
    } finally {
      await store.close();
    }
  });

  it('a budget that is reached refuses the call before any request, and says why', async () => {
    const { store, usage } = await meter([{ scope: 'sender', per: 'day', tokens: 50 }]);
    try {
      const [outcome] = await understandAttachments([PNG], contextFor({ models: [{ provider: 'openai', model: 'gpt-6-astra', capabilities: ['image'], baseUrl: base() }] }, { usage }));
      expect(outcome).toMatchObject({ status: 'failed', attempts: [{ by: 'openai/gpt-6-astra', error: expect.stringContaining('budget of 50 tokens per day is reached') }] });
      expect(fake.requests).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
