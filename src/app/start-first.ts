import { mkdirSync } from 'node:fs';
import { checkBind } from '../../adapters/web/access.js';
import { openWebFront, type WebFront } from '../../adapters/web/front.js';
import { webChatToken, type WebToken } from '../../adapters/web/token.js';
import { ConfigError } from '../config/errors.js';
import type { LoadedConfig } from '../config/load.js';
import { plannedAdapters } from '../config/planned-adapters.js';
import { platformTokenVerdicts, type TokenFinding } from '../config/platform-tokens.js';
import type { WardenConfig } from '../config/schema/index.js';
import { resolveDataDir } from '../store/data-dir.js';
import { parseStoreUrl } from '../store/store-url.js';

// What `warden start` does before the rest of Warden loads. This module's imports are few and
// small on purpose: the web chat's page answers once they, the config and the listener are
// loaded, while the store, the agent, the adapters and the tools load behind it.

/**
 * What refuses a start before anything is created on disk or listens, each naming its key: a web
 * chat bound beyond loopback without a token, a chat platform's token pasted into the wrong key,
 * a `store.url` that is not a PostgreSQL URL. `warnings` are doubtful token shapes (logged by the
 * start). `startWarden` asks the same, so a start without this step refuses the same configs.
 */
export function startRefusal(loaded: LoadedConfig): { error: ConfigError | undefined; warnings: TokenFinding[] } {
  const { config, file } = loaded;
  if (plannedAdapters(config).includes('web')) {
    const bind = checkBind(config.channels.web.host, config.channels.web.token);
    if (!bind.ok) return { error: new ConfigError(file, [{ path: bind.path, message: bind.message }]), warnings: [] };
  }
  const tokens = platformTokenVerdicts(config.channels).flatMap((v) => v.findings);
  const wrong = tokens.filter((f) => f.level === 'fail');
  if (wrong.length > 0) return { error: new ConfigError(file, wrong.map((f) => ({ path: f.path, message: f.message }))), warnings: [] };
  const store = parseStoreUrl(config.store.url);
  if (store.engine === 'invalid') return { error: new ConfigError(file, [{ path: 'store.url', message: store.message }]), warnings: [] };
  return { error: undefined, warnings: tokens.filter((f) => f.level !== 'fail') };
}

/** The web chat's listener, opened ahead of the rest, with the token it checks. */
export interface WebChatFirst {
  listener: WebFront;
  token: Extract<WebToken, { ok: true }>;
}

/** Whether the config names plugins to load (`plugins.paths`, `plugins.load`): only those are loaded. */
export function pluginsConfigured(config: WardenConfig): boolean {
  return config.plugins.enabled !== false && (config.plugins.paths.length > 0 || config.plugins.load.length > 0);
}

/**
 * `warden start`'s first step: refuses what `startRefusal` refuses; loads the configured plugins
 * when there are any (a policy plugin that does not load stops the start before anything
 * listens, and `startWarden` takes the same loaded runtime); then, when the web chat runs, reads
 * or makes its token and opens its listener. The page and `/healthz` answer from here on;
 * requests that need the chat wait until `startWarden` attaches it. On an error nothing listens.
 */
export async function openWebChatFirst(loaded: LoadedConfig, env: NodeJS.ProcessEnv): Promise<{ ok: true; web: WebChatFirst | undefined } | { ok: false; error: Error }> {
  const { config, baseDir } = loaded;
  const refused = startRefusal(loaded).error;
  if (refused) return { ok: false, error: refused };
  if (!plannedAdapters(config).includes('web')) return { ok: true, web: undefined };
  if (pluginsConfigured(config)) {
    const { loadPluginRuntime } = await import('../plugins/runtime.js');
    const refusal = (await loadPluginRuntime(config, baseDir)).refusal();
    if (refusal) return { ok: false, error: new Error(refusal) };
  }
  let token: WebToken;
  if (config.channels.web.token) token = webChatToken(config.channels.web, '');
  else {
    // The per-install token lives in the data dir, which the store would create next.
    const dataDir = resolveDataDir({ configDataDir: config.dataDir, env, cwd: baseDir });
    try {
      mkdirSync(dataDir, { recursive: true });
    } catch (err) {
      return { ok: false, error: new Error(`data dir ${dataDir} cannot be created: ${(err as Error).message}`) };
    }
    token = webChatToken(config.channels.web, dataDir);
  }
  if (!token.ok) return { ok: false, error: new Error(token.error) };
  try {
    return { ok: true, web: { listener: await openWebFront(config.channels.web, token.token), token } };
  } catch (err) {
    return { ok: false, error: err as Error };
  }
}
