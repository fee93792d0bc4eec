import { keyPath } from './keys.js';

/** A `byProvider` entry picked for the turn's model, with the config path it was found at. */
export interface ProviderMatch<T> {
  key: string;
  path: string;
  value: T;
}

/**
 * `byProvider` key matching (reference §2.3): keys compare case-insensitively; the full
 * `provider/model` is tried before the bare `provider`. A slash inside the model id stays scoped
 * to the selected provider (`openrouter/openai/gpt-5` never matches key `openai`). An exact
 * spelling wins over a case-folded one.
 */
export function matchByProvider<T>(map: Readonly<Record<string, T>> | undefined, model: string | undefined, base: string): ProviderMatch<T> | undefined {
  if (!map || !model) return undefined;
  const ref = model.trim().toLowerCase();
  const slash = ref.indexOf('/');
  const candidates = slash > 0 ? [ref, ref.slice(0, slash)] : [ref];
  const keys = Object.keys(map);
  for (const candidate of candidates) {
    const key = keys.find((k) => k === candidate) ?? keys.find((k) => k.trim().toLowerCase() === candidate);
    if (key !== undefined) return { key, path: keyPath(base, key), value: map[key]! };
  }
  return undefined;
}
