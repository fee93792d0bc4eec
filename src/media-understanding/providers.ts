import type { WardenConfig } from '../config/schema/index.js';
import type { MediaModelEntry } from '../config/schema/media-understanding.js';
import type { MediaCapability } from './types.js';
import { withoutTrailingSlashes } from '../util/trailing-slashes.js';

/** The wire dialects Warden can send media to. */
export type MediaApi = 'openai' | 'gemini' | 'anthropic' | 'deepgram';

interface KnownProvider {
  api: MediaApi;
  baseUrl: string;
  keyEnv: string;
  /** A local server that runs without a key (Ollama). */
  keyOptional?: boolean;
  selfHosted?: boolean;
  /** What an entry without `capabilities` handles (OpenClaw's per-provider defaults). */
  inferred: readonly MediaCapability[];
  /** What Warden's client for this provider can do. */
  supports: readonly MediaCapability[];
  defaults: Partial<Record<MediaCapability, string>>;
}

/**
 * Providers Warden reaches without a `models.providers` entry. Any other provider works when
 * `models.providers.<id>` names its API (`openai` for OpenAI-compatible servers) and base URL.
 */
export const KNOWN_MEDIA_PROVIDERS: Readonly<Record<string, KnownProvider>> = {
  openai: { api: 'openai', baseUrl: 'https://api.openai.com/v1', keyEnv: 'OPENAI_API_KEY', inferred: ['image'], supports: ['image', 'audio'], defaults: { audio: 'gpt-4o-mini-transcribe', image: 'gpt-4o-mini' } },
  groq: { api: 'openai', baseUrl: 'https://api.groq.com/openai/v1', keyEnv: 'GROQ_API_KEY', inferred: ['audio'], supports: ['audio', 'image'], defaults: { audio: 'whisper-large-v3-turbo' } },
  mistral: { api: 'openai', baseUrl: 'https://api.mistral.ai/v1', keyEnv: 'MISTRAL_API_KEY', inferred: ['audio'], supports: ['audio', 'image'], defaults: { audio: 'voxtral-mini-latest' } },
  openrouter: { api: 'openai', baseUrl: 'https://openrouter.ai/api/v1', keyEnv: 'OPENROUTER_API_KEY', inferred: ['image', 'audio'], supports: ['image'], defaults: {} },
  ollama: { api: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', keyEnv: 'OLLAMA_API_KEY', keyOptional: true, selfHosted: true, inferred: ['image'], supports: ['image'], defaults: {} },
  google: { api: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', keyEnv: 'GEMINI_API_KEY', inferred: ['image', 'audio', 'video'], supports: ['image', 'audio', 'video'], defaults: { image: 'gemini-3-flash-preview', audio: 'gemini-3-flash-preview', video: 'gemini-3-flash-preview' } },
  anthropic: { api: 'anthropic', baseUrl: 'https://api.anthropic.com/v1', keyEnv: 'ANTHROPIC_API_KEY', inferred: ['image'], supports: ['image'], defaults: {} },
  deepgram: { api: 'deepgram', baseUrl: 'https://api.deepgram.com/v1', keyEnv: 'DEEPGRAM_API_KEY', inferred: ['audio'], supports: ['audio'], defaults: { audio: 'nova-3' } },
};
const ALIASES: Record<string, string> = { gemini: 'google' };

/** OpenClaw's defaults for providers Warden has no client for: they only decide an entry's capabilities. */
const INFERRED_ONLY: Readonly<Record<string, readonly MediaCapability[]>> = {
  xai: ['audio'],
  senseaudio: ['audio'],
  elevenlabs: ['audio'],
  deepinfra: ['image', 'audio'],
  moonshot: ['image', 'video'],
  qwen: ['image', 'video'],
  minimax: ['image'],
  'minimax-portal': ['image'],
  zai: ['image'],
};

/** A provider entry ready to call. */
export interface MediaClient {
  api: MediaApi;
  provider: string;
  model: string;
  baseUrl: string;
  apiKey: string | undefined;
  /** The base URL is the operator's own server, which may be private. */
  selfHosted: boolean;
}

const providerId = (entry: MediaModelEntry) => {
  const id = (entry.provider ?? '').toLowerCase();
  return ALIASES[id] ?? id;
};

/** What an entry handles: its declared capabilities, else its provider's defaults. */
export function entryCapabilities(entry: MediaModelEntry, config: WardenConfig): readonly MediaCapability[] {
  if (entry.capabilities) return entry.capabilities;
  if (entry.type === 'cli') return [];
  const id = providerId(entry);
  const known = KNOWN_MEDIA_PROVIDERS[id]?.inferred ?? INFERRED_ONLY[id];
  if (known) return known;
  // A configured OpenAI-compatible provider is assumed to read images, as OpenClaw does for config providers.
  return config.models.providers?.[id] ? ['image'] : [];
}

/** The client for a provider entry and capability, or why it cannot serve it. */
export function resolveClient(entry: MediaModelEntry, capability: MediaCapability, config: WardenConfig, env: Record<string, string | undefined>): { ok: true; value: MediaClient } | { ok: false; why: string } {
  const id = providerId(entry);
  const configured = config.models.providers?.[id];
  const known = KNOWN_MEDIA_PROVIDERS[id];
  const api: MediaApi | undefined = configured?.api ?? known?.api;
  if (!api) return { ok: false, why: `Warden has no media client for provider "${id}": add models.providers.${id} with api: openai and baseUrl if it speaks the OpenAI API` };
  const supports = known && !configured ? known.supports : api === 'openai' ? (['image', 'audio'] as const) : api === 'gemini' ? (['image', 'audio', 'video'] as const) : (['image'] as const);
  if (!supports.includes(capability)) return { ok: false, why: `${id} cannot ${capability === 'audio' ? 'transcribe audio' : `describe ${capability}`} through Warden` };
  const model = entry.model ?? known?.defaults[capability];
  if (!model) return { ok: false, why: `no model given for ${id} (set model on the entry)` };
  const baseUrl = withoutTrailingSlashes(entry.baseUrl ?? configured?.baseUrl ?? known?.baseUrl ?? '');
  if (!baseUrl) return { ok: false, why: `no base URL for ${id}: set baseUrl on the entry or models.providers.${id}.baseUrl` };
  const keyEnv = configured?.apiKeyEnv ?? known?.keyEnv;
  const apiKey = keyEnv ? env[keyEnv] || undefined : undefined;
  const keyOptional = known?.keyOptional === true || (configured?.baseUrl !== undefined && api === 'openai');
  if (!apiKey && !keyOptional) return { ok: false, why: `${keyEnv ?? `a key for ${id}`} is not set` };
  // A base URL the operator wrote (on the entry or the provider) points at a server they run.
  const selfHosted = entry.baseUrl !== undefined || configured?.baseUrl !== undefined || known?.selfHosted === true;
  return { ok: true, value: { api, provider: id, model, baseUrl, apiKey, selfHosted } };
}

/** `provider/model`, `model`, `provider:<id>` or `cli:<command>` (OpenClaw's preferredModel forms). */
export function matchesPreferred(entry: MediaModelEntry, preferred: string): boolean {
  const p = preferred.trim();
  if (entry.type === 'cli') return p === `cli:${entry.command}`;
  const id = providerId(entry);
  if (p.startsWith('provider:')) return ALIASES[p.slice(9).toLowerCase()] === id || p.slice(9).toLowerCase() === id;
  if (p.includes('/')) {
    const [prov, ...rest] = p.split('/');
    return (ALIASES[prov!.toLowerCase()] ?? prov!.toLowerCase()) === id && rest.join('/') === entry.model;
  }
  return p === entry.model;
}

/** A short name for an entry in results and logs. */
export function entryLabel(entry: MediaModelEntry): string {
  return entry.type === 'cli' ? `cli:${entry.command}` : `${entry.provider}/${entry.model ?? '(default)'}`;
}
