import { describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfigInput } from '../../../config/index.js';
import type { WardenConfig } from '../../../config/schema/index.js';
import { resolveToolSurface } from '../../../policy/surface.js';
import { coreAvailability } from '../../../app/core-tools.js';
import { surfaceInputs } from '../../../app/surface-inputs.js';
import { mediaAvailability, resolveMediaModel, type MediaKind } from './media-model.js';

function config(input: WardenConfigInput): WardenConfig {
  const parsed = parseConfig(input);
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

const local = { models: { providers: { local: { api: 'openai' as const, baseUrl: 'http://127.0.0.1:9/v1' } } } };

describe('media tool availability', () => {
  const cases: Array<[string, WardenConfigInput, MediaKind, NodeJS.ProcessEnv, ReturnType<typeof mediaAvailability>]> = [
    ['image_generate without a media block', {}, 'imageGeneration', {}, { ok: false, why: 'not configured: set media.imageGeneration.model (e.g. openai/gpt-image-1)' }],
    ['tts without its section', { media: { imageGeneration: { model: 'openai/gpt-image-1' } } }, 'tts', { OPENAI_API_KEY: 'k' }, { ok: false, why: 'not configured: set media.tts.model (e.g. openai/gpt-4o-mini-tts)' }],
    ['the built-in openai provider without its key', { media: { imageGeneration: { model: 'openai/gpt-image-1' } } }, 'imageGeneration', {}, { ok: false, why: 'no API key for openai: set OPENAI_API_KEY in the environment' }],
    ['the built-in openai provider with its key', { media: { tts: { model: 'openai/gpt-4o-mini-tts' } } }, 'tts', { OPENAI_API_KEY: 'k' }, { ok: true }],
    ['an empty key counts as missing', { media: { tts: { model: 'openai/gpt-4o-mini-tts' } } }, 'tts', { OPENAI_API_KEY: '' }, { ok: false, why: 'no API key for openai: set OPENAI_API_KEY in the environment' }],
    ['a compatible server with a baseUrl needs no key', { ...local, media: { tts: { model: 'local/kokoro' } } }, 'tts', {}, { ok: true }],
    [
      'a provider entry with its own key variable',
      { models: { providers: { openai: { apiKeyEnv: 'TEAM_OPENAI_KEY' } } }, media: { imageGeneration: { model: 'openai/gpt-image-1' } } },
      'imageGeneration',
      { OPENAI_API_KEY: 'k' },
      { ok: false, why: 'no API key for openai: set TEAM_OPENAI_KEY in the environment' },
    ],
  ];
  it.each(cases)('%s', (_name, input, kind, env, expected) => {
    expect(mediaAvailability(config(input), kind, env)).toEqual(expected);
  });

  it('resolves base URL, key and retry policy from models.*', () => {
    const c = config({ ...local, models: { ...local.models, retry: { attempts: 2 } }, media: { imageGeneration: { model: 'local/sdxl' } } });
    const resolved = resolveMediaModel(c, 'imageGeneration', { OPENAI_API_KEY: 'ignored' });
    expect(resolved.ok && { ref: resolved.value.ref, model: resolved.value.settings.model, baseUrl: resolved.value.settings.baseUrl, attempts: resolved.value.settings.retry.attempts }).toEqual({
      ref: 'local/sdxl',
      model: 'sdxl',
      baseUrl: 'http://127.0.0.1:9/v1',
      attempts: 2,
    });
  });

  it('is what the core registry reports for image_generate and tts', () => {
    const c = config({ media: { imageGeneration: { model: 'openai/gpt-image-1' } } });
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      expect(coreAvailability('image_generate', c)).toEqual({ ok: false, why: 'no API key for openai: set OPENAI_API_KEY in the environment' });
      expect(coreAvailability('tts', c)).toEqual({ ok: false, why: 'not configured: set media.tts.model (e.g. openai/gpt-4o-mini-tts)' });
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});

describe('media config', () => {
  const refused: Array<[string, WardenConfigInput, string, string]> = [
    ['an unknown provider', { media: { imageGeneration: { model: 'acme/painter' } } }, 'media.imageGeneration.model', 'unknown provider "acme" in "acme/painter": use openai, or add models.providers.acme with api: openai and baseUrl'],
    ['a built-in provider of another dialect', { media: { tts: { model: 'anthropic/claude' } } }, 'media.tts.model', 'provider "anthropic" speaks anthropic; tts needs an OpenAI-compatible provider (api: openai)'],
    ['google, which speaks gemini', { media: { imageGeneration: { model: 'google/imagen' } } }, 'media.imageGeneration.model', 'provider "google" speaks gemini; imageGeneration needs an OpenAI-compatible provider (api: openai)'],
    [
      'a configured provider of another dialect',
      { models: { providers: { proxy: { api: 'anthropic', baseUrl: 'http://127.0.0.1:9' } } }, media: { tts: { model: 'proxy/voice' } } },
      'media.tts.model',
      'provider "proxy" speaks anthropic; tts needs an OpenAI-compatible provider (api: openai)',
    ],
    ['a ref without a provider', { media: { tts: { model: 'gpt-4o-mini-tts' } } }, 'media.tts.model', 'expected "provider/model", e.g. "openai/gpt-image-1"'],
    ['an unknown speech format', { media: { tts: { model: 'openai/tts-1', format: 'ogg' as 'mp3' } } }, 'media.tts.format', '"mp3"'],
    ['an unknown key', { media: { imageGeneration: { model: 'openai/gpt-image-1', style: 'vivid' } as never } }, 'media.imageGeneration.style', 'unknown key'],
  ];
  it.each(refused)('refuses %s, naming the key', (_name, input, keyPath, message) => {
    const parsed = parseConfig(input);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const problem = parsed.error.problems.find((p) => p.path === keyPath);
    expect(problem, JSON.stringify(parsed.error.problems)).toBeDefined();
    expect(problem!.message).toContain(message);
  });

  it('fills defaults for voice, format, size and timeouts', () => {
    const c = config({ ...local, media: { imageGeneration: { model: 'local/sdxl' }, tts: { model: 'openai/gpt-4o-mini-tts' } } });
    expect(c.media).toEqual({
      imageGeneration: { model: 'local/sdxl', size: '1024x1024', timeoutSec: 120 },
      tts: { model: 'openai/gpt-4o-mini-tts', voice: 'alloy', format: 'mp3', timeoutSec: 60 },
    });
  });
});

describe('media tools on the tool surface', () => {
  // A compatible server needs no key, so the result does not depend on this machine's environment.
  const c = config({ ...local, tools: { profile: 'full' }, media: { imageGeneration: { model: 'local/sdxl' }, tts: { model: 'local/kokoro' } } });
  const surface = (provider: string) =>
    resolveToolSurface(c, { agentId: 'main', provider, chat: 'dm', senderIsOwner: true, spawnDepth: 0, model: 'anthropic/m' }, surfaceInputs(c, '.')).tools;

  it('offers both once configured', () => {
    expect(surface('slack')).toEqual(expect.arrayContaining(['image_generate', 'tts']));
  });

  it.each(['voice', 'discord-voice'])('drops tts, not image_generate, for the %s provider', (provider) => {
    const ids = surface(provider);
    expect(ids).toContain('image_generate');
    expect(ids).not.toContain('tts');
  });

  it('reports them unavailable with the reason when not configured', () => {
    const bare = config({ tools: { profile: 'full' } });
    const result = resolveToolSurface(bare, { agentId: 'main', provider: 'slack', chat: 'dm', senderIsOwner: true, spawnDepth: 0 }, surfaceInputs(bare, '.'));
    expect(result.tools).not.toContain('tts');
    expect(JSON.stringify(result.unavailable)).toContain('not configured: set media.tts.model');
  });
});
