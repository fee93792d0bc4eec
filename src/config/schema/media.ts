import * as z from 'zod';
import { lazySchema, once } from './lazy.js';

const modelRef = once(() => z.string().regex(/^[a-z0-9][a-z0-9._-]*\/.+$/i, 'expected "provider/model", e.g. "openai/gpt-image-1"'));

/** Sizes the Images API accepts across its models; `auto` lets gpt-image models choose. */
export const IMAGE_SIZES = ['auto', '1024x1024', '1536x1024', '1024x1536', '256x256', '512x512', '1792x1024', '1024x1792'] as const;
/** Formats the Audio speech API writes. */
export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;

/** `media.imageGeneration`: the model behind image_generate (OpenAI Images API or a compatible server). */
export const imageGenerationConfig = lazySchema(() => z.strictObject({
  model: modelRef(),
  /** Used when a call names no size (default 1024x1024). */
  size: z.enum(IMAGE_SIZES).default('1024x1024'),
  /** gpt-image models: low, medium, high or auto; dall-e-3: standard or hd. Absent: the model's default. */
  quality: z.enum(['auto', 'low', 'medium', 'high', 'standard', 'hd']).optional(),
  timeoutSec: z.number().int().positive().max(600).default(120),
}));
export type ImageGenerationConfig = z.infer<typeof imageGenerationConfig>;

/** `media.tts`: the model behind tts (OpenAI Audio speech API or a compatible server). */
export const ttsConfig = lazySchema(() => z.strictObject({
  model: modelRef(),
  /** Used when a call names no voice. */
  voice: z.string().min(1).max(64).default('alloy'),
  format: z.enum(SPEECH_FORMATS).default('mp3'),
  timeoutSec: z.number().int().positive().max(600).default(60),
}));
export type TtsConfig = z.infer<typeof ttsConfig>;

/** Absent sections leave their tool unavailable. */
export const mediaConfig = lazySchema(() => z.strictObject({
  imageGeneration: imageGenerationConfig.optional(),
  tts: ttsConfig.optional(),
}));
export type MediaConfig = z.infer<typeof mediaConfig>;

const MEDIA_KEYS = ['imageGeneration', 'tts'] as const;
/** Provider names that need no `models.providers` entry, and the API each speaks (as in src/models/settings.ts). */
const BUILT_IN_APIS: Record<string, string> = { openai: 'openai', anthropic: 'anthropic', gemini: 'gemini', google: 'gemini' };

/**
 * Both media APIs are OpenAI's, so a media model's provider must speak `api: openai`: the
 * built-in `openai`, or an entry of `models.providers` that does. Checked across blocks,
 * so a typo in the provider fails at load time rather than on the first call.
 */
export function checkMediaProviders(
  config: { media?: MediaConfig | undefined; models: { providers?: Record<string, { api?: string | undefined }> | undefined } },
  ctx: z.RefinementCtx,
): void {
  for (const key of MEDIA_KEYS) {
    const ref = config.media?.[key]?.model;
    if (ref === undefined) continue;
    const provider = ref.slice(0, ref.indexOf('/')).toLowerCase();
    const entry = config.models.providers?.[provider];
    const api = entry?.api ?? (Object.hasOwn(BUILT_IN_APIS, provider) ? BUILT_IN_APIS[provider] : undefined);
    if (api === 'openai') continue;
    ctx.addIssue({
      code: 'custom',
      path: ['media', key, 'model'],
      message:
        api === undefined
          ? `unknown provider "${provider}" in "${ref}": use openai, or add models.providers.${provider} with api: openai and baseUrl`
          : `provider "${provider}" speaks ${api}; ${key} needs an OpenAI-compatible provider (api: openai)`,
    });
  }
}
