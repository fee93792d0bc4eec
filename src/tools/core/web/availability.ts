/**
 * Whether web_search and web_fetch can be offered: cheap checks of the config and the
 * environment, kept apart from the tools so the policy never loads their extractors.
 */
import type { WardenConfig } from '../../../config/schema/index.js';
import { WEB_FETCH_ENABLED_BY_DEFAULT, webFetchConfig, type WebFetchConfig } from '../../../config/schema/web.js';
import type { Availability } from '../../types.js';
import { selectProviders } from './search/select.js';

/** web_search is offered when search is enabled and some provider can be used (see search/select.ts). */
export function webSearchAvailability(config: WardenConfig, env: NodeJS.ProcessEnv = process.env): Availability {
  const selection = selectProviders(config, env);
  return selection.ok ? { ok: true } : { ok: false, why: selection.why };
}

let defaults: WebFetchConfig | undefined;

/**
 * The effective `tools.web.fetch` block: defaults when absent. The defaults are parsed once
 * (the policy asks on every turn's surface) and shared read-only.
 */
export function webFetchSettings(config: WardenConfig): WebFetchConfig {
  return config.tools.web?.fetch ?? (defaults ??= Object.freeze(webFetchConfig.parse({})));
}

export function webFetchAvailability(config: WardenConfig): Availability {
  // The one key this needs, without parsing `{}` through the whole fetch schema when the block is absent.
  const enabled = config.tools.web?.fetch?.enabled ?? WEB_FETCH_ENABLED_BY_DEFAULT;
  return enabled ? { ok: true } : { ok: false, why: 'tools.web.fetch.enabled is false' };
}
