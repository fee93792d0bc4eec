// The known secrets of a running Warden, gathered at the composition root and registered with
// the one scrubber (redact/scrub.ts): every credential the config holds (bot and app tokens,
// signing secrets, API keys, the HTTP API and node tokens, store URLs' passwords, MCP env and
// headers), the values of the environment variables its `*Env` keys name and of secret-named
// environment variables, the `.env` values Warden loaded, and the web chat's token.
import path from 'node:path';
import { configEnv } from '../config/load.js';
import type { WardenConfig } from '../config/index.js';
import { classifyName, configSecrets } from '../redact/redact.js';
import { type KnownSecret, MIN_SECRET_CHARS, safeLabelName } from '../redact/scrub.js';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const VALUE_MAP_WORDS = new Set(['env', 'environment', 'headers', 'header']);
const CONTAINER_WORDS = new Set(['channels', 'servers', 'providers', 'list', 'mcp', 'models', 'plugins', 'entries', 'config']);

/**
 * The working directory a shell exports (`PWD`, `OLDPWD`): its name reads as a password's
 * abbreviation to the name rule, but its value is a folder path. Hidden everywhere, it garbled
 * every path under the directory Warden was started from — the skills' locations in the system
 * prompt among them — and left that prompt never clean, so it was scanned again every turn.
 */
const isShellDirectory = (name: string, value: string): boolean => (name === 'PWD' || name === 'OLDPWD') && path.isAbsolute(value);

/**
 * A value that is not a plain word or setting: long enough, no blanks, letters and digits.
 * An env or header map also holds `LOG_LEVEL=debug` and `Accept: application/json`, which
 * hidden everywhere would garble ordinary text.
 */
export function credentialLike(value: string): boolean {
  if (value.length < 8 || /\s/.test(value.trim())) return false;
  return /[0-9]/.test(value) && /[A-Za-z]/.test(value);
}

/** `channels.discord.token` → DISCORD_TOKEN; `mcp.servers.docs.headers.Authorization` → DOCS_AUTHORIZATION. */
function nameOf(at: readonly string[]): string {
  const words = at.filter((w) => !VALUE_MAP_WORDS.has(w.toLowerCase()) && !CONTAINER_WORDS.has(w.toLowerCase()) && !/^\d+$/.test(w));
  return safeLabelName(words.slice(-2).join('_').replace(/[^A-Za-z0-9]+/g, '_').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase());
}

function walk(value: unknown, at: string[], env: Readonly<Record<string, string | undefined>>, out: KnownSecret[], inMap: boolean): void {
  if (typeof value === 'string') {
    const key = at.at(-1) ?? '';
    const kind = classifyName(key);
    if (kind === 'env-name') {
      const v = env[value];
      if (v) out.push({ name: value, value: v });
      return;
    }
    if (kind === 'secret' || (inMap && credentialLike(value))) {
      out.push({ name: nameOf(at), value });
      // `Authorization: Bearer X` in a headers map: X alone is the credential too.
      const scheme = /^(?:Bearer|Basic|Token)\s+(\S+)$/i.exec(value);
      if (scheme) out.push({ name: nameOf(at), value: scheme[1]! });
      return;
    }
    // A URL's password (store.url, an MCP server's URL).
    if (value.includes('://') && value.includes('@')) {
      try {
        const url = new URL(value);
        if (url.password) {
          out.push({ name: `${nameOf(at)}_PASSWORD`, value: decodeURIComponent(url.password) });
          out.push({ name: `${nameOf(at)}_PASSWORD`, value: url.password });
        }
      } catch {
        // Not a URL: configSecrets below still finds userinfo written another way.
      }
    }
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => walk(v, [...at, String(i)], env, out, inMap));
    return;
  }
  if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const map = classifyName(k) === 'value-map';
      // A secret-named key over leaves (`token: {…}` never is): every leaf under it.
      walk(v, [...at, k], env, out, inMap || map);
    }
  }
}

export interface KnownSecretInputs {
  /** The environment Warden runs with (`${NAME}` references, `*Env` keys). */
  env: Readonly<Record<string, string | undefined>>;
  /** The config file read (its `.env` sits beside it), or the base directory without one. */
  configFile?: string | undefined;
  baseDir: string;
  /** The web chat's token when it runs (from the config or the per-install file). */
  webToken?: string | undefined;
}

/** Every known secret of this config and environment, de-duplicated by value (the first name wins). */
export function configuredSecrets(config: WardenConfig, inputs: KnownSecretInputs): KnownSecret[] {
  const out: KnownSecret[] = [];
  walk({ ...config, secrets: undefined }, [], inputs.env, out, false);
  for (const [name, value] of Object.entries(inputs.env)) {
    if (value && classifyName(name) === 'secret' && value.length >= MIN_SECRET_CHARS && !isShellDirectory(name, value)) out.push({ name: safeLabelName(name), value });
  }
  // The `.env` files Warden read its variables from (beside the config, then the working directory).
  const dotenv = configEnv(inputs.configFile ?? path.join(inputs.baseDir, 'warden.config.yaml'), { env: {}, cwd: inputs.baseDir });
  for (const [name, value] of Object.entries(dotenv)) {
    if (value && (classifyName(name) === 'secret' || credentialLike(value))) out.push({ name: safeLabelName(name), value });
  }
  if (inputs.webToken) out.push({ name: 'WEB_CHAT_TOKEN', value: inputs.webToken });
  // Whatever else the config redaction hides by a rule (a password in an argument list, a token in a webhook URL).
  // Named by the secret it holds when it holds one (`user:password` of a URL is the password's).
  const named = [...out];
  // `secrets.grants` holds names and command globs, never values: the name-based rules would take its block for one.
  const { secrets: _grants, ...valued } = config;
  // (It hides every env and header value; `Accept: application/json` is no credential to hunt for in all text.)
  for (const value of configSecrets(valued, { env: inputs.env })) {
    const holds = named.find((s) => s.value.length >= MIN_SECRET_CHARS && value.includes(s.value));
    if (holds || credentialLike(value)) out.push({ name: holds?.name ?? 'CONFIG_SECRET', value });
  }
  const seen = new Map<string, KnownSecret>();
  for (const s of out) if (!seen.has(s.value)) seen.set(s.value, s);
  // Env var names win over key paths for the same value.
  for (const [name, value] of Object.entries({ ...dotenv, ...inputs.env })) {
    if (value && seen.has(value) && seen.get(value)!.name !== name && !isShellDirectory(name, value) && (classifyName(name) === 'secret' || credentialLike(value))) seen.set(value, { name: safeLabelName(name), value });
  }
  return [...seen.values()].filter((s) => s.value.length >= 4);
}
