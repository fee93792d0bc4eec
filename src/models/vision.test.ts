import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAKE_PNG } from '../../test/fakes/models/openai-media-fake.js';
import { parseConfig } from '../config/index.js';
import { takeInFiles } from '../gateway/inbound-files.js';
import { modelReadsImages } from './vision.js';

const config = (providers: Record<string, unknown>) => {
  const parsed = parseConfig({ models: { providers } });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
};

const local = (input?: string[]) => ({ local: { api: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', models: [{ id: 'qwen3-vl', ...(input ? { input } : {}) }, { id: 'llama-text', input: ['text'] }] } });

describe('a model reads images when its definition says so', () => {
  it.each([
    ['listed with input ["text", "image"]', local(['text', 'image']), 'local/qwen3-vl', true],
    ['listed with input ["text"]', local(), 'local/llama-text', false],
    ['listed without input', local(), 'local/qwen3-vl', true],
    ['not listed under its provider', local(), 'local/other', true],
    ['a hosted provider with no model list', {}, 'anthropic/claude-sonnet-4-5', true],
    ['the provider name in another case', local(), 'LOCAL/llama-text', false],
    ['the id is provider-local: a prefixed id does not match', { local: { api: 'openai', models: [{ id: 'local/llama-text', input: ['text'] }] } }, 'local/llama-text', true],
    ['no model at all', {}, undefined, false],
    ['not a provider/model ref', {}, 'gpt', false],
  ])('%s', (_case, providers, ref, expected) => {
    expect(modelReadsImages(config(providers), ref)).toBe(expected);
  });

  it('a model entry with an unknown input kind or key is refused by the schema', () => {
    expect(parseConfig({ models: { providers: { local: { api: 'openai', models: [{ id: 'm', input: ['text', 'video'] }] } } } }).ok).toBe(false);
    expect(parseConfig({ models: { providers: { local: { api: 'openai', models: [{ id: 'm', inputs: ['text'] }] } } } }).ok).toBe(false);
  });

  it("an entry pasted from OpenClaw's configuration examples parses, and only its input is read", () => {
    const pasted = {
      id: 'llama-3.1-8b',
      name: 'Llama 3.1 8B',
      api: 'openai-completions',
      reasoning: false,
      input: ['text'],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 128000,
      maxTokens: 32000,
    };
    expect(modelReadsImages(config({ local: { api: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', models: [pasted] } }), 'local/llama-3.1-8b')).toBe(false);
  });
});

describe('an image posted to a text-only model', () => {
  const image = { id: 'i1', name: 'shot.png', mimeType: 'image/png', download: async () => ({ ok: true as const, data: FAKE_PNG }) };
  it.each([
    ['a vision model gets the image part', true, 1, /^\[image shot\.png attached above; saved as inbox\/[^\]]+\]$/],
    ['a text-only model gets the path and a note', false, 0, /^\[image shot\.png \(image\/png\) saved as (inbox\/[^;]+); not attached: the model answering here does not read images\]$/],
  ])('%s', async (_case, vision, parts, note) => {
    const workspaceDir = mkdtempSync(path.join(tmpdir(), 'warden-vision-'));
    const taken = await takeInFiles([image], { workspaceDir, vision });
    expect(taken.images).toHaveLength(parts);
    expect(taken.notes[0]).toMatch(note);
    const rel = /saved as (inbox\/[^;\]]+)/.exec(taken.notes[0]!)![1]!;
    expect(readFileSync(path.join(workspaceDir, rel))).toEqual(FAKE_PNG);
  });
});
