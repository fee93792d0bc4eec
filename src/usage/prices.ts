import type { WardenConfig } from '../config/index.js';

/**
 * A model's price in US dollars per million tokens, as OpenClaw's
 * `models.providers.<id>.models[].cost` states it (`input`, `output`, `cacheRead`, `cacheWrite`),
 * and where it came from (shown beside every cost).
 */
export interface Price {
  input: number;
  output: number;
  /** Cached prompt tokens; absent: billed as `input`. */
  cacheRead?: number | undefined;
  /** Prompt tokens written to the cache; absent: billed as `input`. */
  cacheWrite?: number | undefined;
  source: string;
}

/** The date the built-in table was read from the providers' price pages; a newer price belongs in the config. */
export const BUILT_IN_PRICES_DATE = '2025-11-01';
const BUILT_IN_SOURCE = `built-in table of ${BUILT_IN_PRICES_DATE}`;

type Row = readonly [input: number, output: number, cacheRead?: number, cacheWrite?: number];

/**
 * List prices (USD per million tokens, standard tier, prompts up to 200k tokens where a
 * provider prices by length) of the three providers' current models, as published on
 * BUILT_IN_PRICES_DATE. Exact model ids only (a dated snapshot id such as
 * `claude-sonnet-4-5-20250929` maps to its alias); any other model's price is unknown.
 */
const BUILT_IN: Record<'anthropic' | 'openai' | 'gemini', Record<string, Row>> = {
  anthropic: {
    'claude-opus-4-5': [5, 25, 0.5, 6.25],
    'claude-opus-4-1': [15, 75, 1.5, 18.75],
    'claude-opus-4-0': [15, 75, 1.5, 18.75],
    'claude-sonnet-4-5': [3, 15, 0.3, 3.75],
    'claude-sonnet-4-0': [3, 15, 0.3, 3.75],
    'claude-haiku-4-5': [1, 5, 0.1, 1.25],
    'claude-3-5-haiku-latest': [0.8, 4, 0.08, 1],
  },
  openai: {
    'gpt-5': [1.25, 10, 0.125],
    'gpt-5-mini': [0.25, 2, 0.025],
    'gpt-5-nano': [0.05, 0.4, 0.005],
    'gpt-4.1': [2, 8, 0.5],
    'gpt-4.1-mini': [0.4, 1.6, 0.1],
    'gpt-4.1-nano': [0.1, 0.4, 0.025],
    'gpt-4o': [2.5, 10, 1.25],
    'gpt-4o-mini': [0.15, 0.6, 0.075],
  },
  gemini: {
    'gemini-2.5-pro': [1.25, 10, 0.125],
    'gemini-2.5-flash': [0.3, 2.5, 0.03],
    'gemini-2.5-flash-lite': [0.1, 0.4, 0.01],
  },
};

const ALIASES: Record<string, string> = { 'claude-opus-4': 'claude-opus-4-0', 'claude-sonnet-4': 'claude-sonnet-4-0' };

/** `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`; `gpt-4o-2024-08-06` → `gpt-4o`. */
function withoutSnapshot(model: string): string {
  const tail = (n: number, shape: RegExp) => model.length > n && model[model.length - n - 1] === '-' && shape.test(model.slice(-n));
  const base = tail(8, /^\d{8}$/) ? model.slice(0, -9) : tail(10, /^\d{4}-\d{2}-\d{2}$/) ? model.slice(0, -11) : model;
  return ALIASES[base] ?? base;
}

const BUILT_IN_PROVIDERS: Record<string, keyof typeof BUILT_IN> = { anthropic: 'anthropic', openai: 'openai', gemini: 'gemini', google: 'gemini' };

/**
 * The price of `provider/model`: the config's `cost` entry when the model is listed with one
 * (input and output both set), else the built-in table for the three providers reached at
 * their own API (a `baseUrl` means another server — a proxy or a local model — whose price
 * Warden cannot know), else undefined: the price is unknown, never taken as 0.
 */
export function priceFor(config: Pick<WardenConfig, 'models'>, provider: string, model: string): Price | undefined {
  const entry = config.models.providers?.[provider];
  const listed = entry?.models?.find((m) => m.id === model)?.cost;
  if (listed && typeof listed.input === 'number' && typeof listed.output === 'number') {
    return {
      input: listed.input,
      output: listed.output,
      ...(typeof listed.cacheRead === 'number' ? { cacheRead: listed.cacheRead } : {}),
      ...(typeof listed.cacheWrite === 'number' ? { cacheWrite: listed.cacheWrite } : {}),
      source: `models.providers.${provider}.models[${model}].cost`,
    };
  }
  const table = BUILT_IN_PROVIDERS[provider];
  if (!table || entry?.baseUrl !== undefined) return undefined;
  const row = BUILT_IN[table][withoutSnapshot(model)];
  if (!row) return undefined;
  const [input, output, cacheRead, cacheWrite] = row;
  return { input, output, ...(cacheRead !== undefined ? { cacheRead } : {}), ...(cacheWrite !== undefined ? { cacheWrite } : {}), source: BUILT_IN_SOURCE };
}
