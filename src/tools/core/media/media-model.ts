/**
 * Which model serves a media tool, and whether it can be reached: the cheap half of
 * image_generate and tts, safe for the policy to call on every turn (no SDK imported).
 */
import type { WardenConfig } from '../../../config/schema/index.js';
import { apiKeyFor, modelSettings, type ModelSettings } from '../../../models/settings.js';
import type { Availability } from '../../types.js';

export type MediaKind = 'imageGeneration' | 'tts';

/** A media model ready to call: provider settings from `models.*` and the key from the environment. */
export interface MediaModel {
  ref: string;
  settings: ModelSettings;
  apiKey: string | undefined;
}

const EXAMPLE: Record<MediaKind, string> = { imageGeneration: 'openai/gpt-image-1', tts: 'openai/gpt-4o-mini-tts' };

export function resolveMediaModel(config: WardenConfig, kind: MediaKind, env: NodeJS.ProcessEnv): { ok: true; value: MediaModel } | { ok: false; why: string } {
  const ref = config.media?.[kind]?.model;
  if (ref === undefined) return { ok: false, why: `not configured: set media.${kind}.model (e.g. ${EXAMPLE[kind]})` };
  const resolved = modelSettings(config, ref);
  if (!resolved.ok) return { ok: false, why: `media.${kind}.model: ${resolved.message}` };
  // The schema refuses other dialects at load time; a config built in code may still carry one.
  if (resolved.value.api !== 'openai') return { ok: false, why: `media.${kind}.model: provider "${resolved.value.provider}" speaks ${resolved.value.api}, not the OpenAI API` };
  const key = apiKeyFor(resolved.value, env);
  if (!key.ok) return { ok: false, why: key.message };
  return { ok: true, value: { ref, settings: resolved.value, apiKey: key.apiKey } };
}

export function mediaAvailability(config: WardenConfig, kind: MediaKind, env: NodeJS.ProcessEnv = process.env): Availability {
  const resolved = resolveMediaModel(config, kind, env);
  return resolved.ok ? { ok: true } : resolved;
}
