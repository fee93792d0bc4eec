import type { WardenConfig } from '../config/index.js';
import { configuredListeners } from './own-listeners.js';
import { checkUrlWithPolicy, systemResolver, type Resolver, type UrlPolicy, type UrlSurface, type UrlVerdict } from './check.js';

/** The URL policy a surface runs under, from the config, with the listeners the config opens. */
export function urlPolicyFor(config: WardenConfig, surface: UrlSurface): UrlPolicy {
  const ownListeners = configuredListeners(config);
  if (surface === 'web_fetch') return { ...(config.tools.web?.fetch?.ssrfPolicy ?? {}), ownListeners };
  return { ...(config.browser.ssrfPolicy ?? {}), ownListeners };
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
