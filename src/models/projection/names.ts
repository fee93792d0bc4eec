import type { ProviderApi } from '../types.js';

/** What each API accepts as a function name. */
export const NAME_RULES: Record<ProviderApi, { pattern: RegExp; max: number; describe: string }> = {
  anthropic: { pattern: /^[a-zA-Z0-9_-]{1,128}$/, max: 128, describe: 'letters, digits, "_" and "-", at most 128' },
  openai: { pattern: /^[a-zA-Z0-9_-]{1,64}$/, max: 64, describe: 'letters, digits, "_" and "-", at most 64' },
  gemini: {
    pattern: /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/,
    max: 64,
    describe: 'a letter or "_" first, then letters, digits, "_", ".", ":" and "-", at most 64',
  },
};

/**
 * The wire name for a tool id: the id itself when the API accepts it, else the id with every
 * rejected character replaced by `_` and cut to length. Collisions are the caller's to detect.
 */
export function wireName(id: string, api: ProviderApi): string {
  const rule = NAME_RULES[api];
  if (rule.pattern.test(id)) return id;
  const allowed = api === 'gemini' ? /[a-zA-Z0-9_.:-]/ : /[a-zA-Z0-9_-]/;
  let name = [...id].map((c) => (allowed.test(c) ? c : '_')).join('');
  if (api === 'gemini' && !/^[a-zA-Z_]/.test(name)) name = `_${name}`;
  return name.slice(0, rule.max) || '_';
}
