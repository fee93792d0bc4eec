import type { WardenConfig } from '../config/index.js';
import { checkUrlWithPolicy, systemResolver, type Resolver, type UrlPolicy, type UrlSurface, type UrlVerdict } from './check.js';

/** The URL policy a surface runs under, from the config. */
export function urlPolicyFor(config: WardenConfig, surface: UrlSurface): UrlPolicy {
  if (surface === 'web_fetch') return { ...(config.tools.web?.fetch?.ssrfPolicy ?? {}) };
  return { ...(config.browser.ssrfPolicy ?? {}) };
}

/** `checkUrl(config, url)`: what `warden url-check` prints, for web_fetch (default) or the browser. */
export function checkUrl(
  config: WardenConfig,
  url: string,
  options: { surface?: UrlSurface; resolve?: Resolver } = {},
): Promise<UrlVerdict> {
  const surface = options.surface ?? 'web_fetch';
  return checkUrlWithPolicy(url, surface, urlPolicyFor(config, surface), options.resolve ?? systemResolver);
}
