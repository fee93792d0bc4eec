import * as z from 'zod';
import { lazySchema, once } from './lazy.js';

/**
 * `tools.media`: inbound media understanding (OpenClaw's shape). Audio attachments are
 * transcribed, images and video described, before the model sees the message; an entry that
 * fails, times out or is too small for the file hands over to the next one.
 */
export const MEDIA_CAPABILITIES = ['image', 'audio', 'video'] as const;
export type MediaCapability = (typeof MEDIA_CAPABILITIES)[number];

const optionValue = once(() => z.union([z.string(), z.number(), z.boolean()]));

/** What a capability default and a model entry may both set; the entry wins. */
const runtimeFields = once(() => ({
  prompt: z.string().min(1).max(4000).optional(),
  timeoutSec: z.number().int().positive().max(3600).optional(),
  /** Audio: a language hint for the transcriber (`en`, `de`, …). */
  language: z.string().min(1).max(32).optional(),
  /** Provider-specific query or body parameters, by provider id (`deepgram: { punctuate: true }`). */
  providerOptions: z.record(z.string().min(1), z.record(z.string().min(1), optionValue())).optional(),
  /** API base for provider requests (an OpenAI-compatible server, a proxy). */
  baseUrl: z.url().optional(),
  headers: z.record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'not a valid HTTP header name'), z.string()).optional(),
}));

export const mediaModelEntry = lazySchema(() => z
  .strictObject({
    /** `provider` (default): an API; `cli`: a local command run under the exec policy. */
    type: z.enum(['provider', 'cli']).optional(),
    provider: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/i, 'provider id: letters, digits, ".", "-", "_"').optional(),
    model: z.string().min(1).optional(),
    capabilities: z.array(z.enum(MEDIA_CAPABILITIES)).min(1).optional(),
    command: z.string().trim().min(1).optional(),
    /** Arguments with `{{AttachmentPath}}`, `{{MaxChars}}`, … placeholders; each stays one argument. */
    args: z.array(z.string()).optional(),
    maxChars: z.number().int().positive().optional(),
    maxBytes: z.number().int().positive().optional(),
    ...runtimeFields(),
    /**
     * OpenClaw's stored auth-profile choice. Warden stores no auth profiles, so the key comes from
     * the provider's environment variable, as OpenClaw does when the profile is absent.
     */
    profile: z.string().min(1).optional(),
    preferredProfile: z.string().min(1).optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.type === 'cli') {
      if (!entry.command) ctx.addIssue({ code: 'custom', path: ['command'], message: 'a cli entry needs command' });
      if (!entry.args || entry.args.length === 0) ctx.addIssue({ code: 'custom', path: ['args'], message: 'a cli entry needs args (pass the file with {{AttachmentPath}}; nothing is fed on stdin)' });
      if (!entry.capabilities) ctx.addIssue({ code: 'custom', path: ['capabilities'], message: 'a cli entry must declare its capabilities' });
      for (const key of ['provider', 'model', 'baseUrl', 'profile', 'preferredProfile'] as const) {
        if (entry[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `${key} belongs to provider entries, not to type: cli` });
      }
    } else {
      if (!entry.provider) ctx.addIssue({ code: 'custom', path: ['provider'], message: 'a provider entry needs provider (e.g. openai), or type: cli with a command' });
      for (const key of ['command', 'args'] as const) {
        if (entry[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `${key} belongs to type: cli entries` });
      }
    }
  }));
export type MediaModelEntry = z.infer<typeof mediaModelEntry>;

const attachmentsPolicy = lazySchema(() => z.strictObject({
  /** `first` (default): the first matching attachment only; `all`: up to maxAttachments. */
  mode: z.enum(['first', 'all']).optional(),
  maxAttachments: z.number().int().positive().max(32).optional(),
  /** Which candidates come first: message order, reverse order, local files, or URLs. */
  prefer: z.enum(['first', 'last', 'path', 'url']).optional(),
}));

const capabilityFields = once(() => ({
  /** false: never for this capability. Default: on when an entry can serve it. */
  enabled: z.boolean().optional(),
  /** `provider/model`, a model id, `provider:<id>` or `cli:<command>`: tried first. */
  preferredModel: z.string().trim().min(1).optional(),
  maxBytes: z.number().int().positive().optional(),
  maxChars: z.number().int().positive().optional(),
  ...runtimeFields(),
  attachments: attachmentsPolicy.optional(),
}));

export const mediaCapabilityConfig = lazySchema(() => z.strictObject(capabilityFields()));
export const mediaAudioConfig = lazySchema(() => z.strictObject({
  ...capabilityFields(),
  /** Post the transcript back to the chat before the turn runs (the adapters do the posting). */
  echoTranscript: z.boolean().optional(),
  /** `{transcript}` is replaced; default `📝 "{transcript}"`. */
  echoFormat: z.string().min(1).max(500).optional(),
}));
export type MediaCapabilityConfig = z.infer<typeof mediaCapabilityConfig>;
export type MediaAudioConfig = z.infer<typeof mediaAudioConfig>;

export const mediaUnderstandingConfig = lazySchema(() => z.strictObject({
  models: z.array(mediaModelEntry).default([]),
  /** Attachments understood at the same time (default 2). */
  concurrency: z.number().int().positive().max(16).default(2),
  image: mediaCapabilityConfig.optional(),
  audio: mediaAudioConfig.optional(),
  video: mediaCapabilityConfig.optional(),
}));
export type MediaUnderstandingConfig = z.infer<typeof mediaUnderstandingConfig>;
