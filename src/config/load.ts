import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { json5 } from '../util/json5.js';
import { ConfigError, formatPath, problemsFromZod, type ConfigProblem } from './errors.js';
import { restoreWrittenPaths, translateOpenClaw } from './openclaw/translate.js';
import { execConfig } from './schema/exec.js';
import { wardenConfigSchema, type WardenConfig } from './schema/index.js';
import { replaceEnvReferences } from './env-ref.js';
import { SANDBOX_ID_ENV, sandboxIdSetting } from './sandbox-id.js';
import { json5ProblemMessage, yamlProblemMessages } from './syntax-error.js';
// The YAML parser is some seventy modules: loaded when a YAML file is read, not by every command.
import { yaml } from '../util/yaml.js';

export const DEFAULT_CONFIG_FILE = 'warden.config.yaml';


export interface LoadedConfig {
  config: WardenConfig;
  /** Absolute path of the file read, or undefined when none exists and defaults apply. */
  file: string | undefined;
  /** Directory relative paths in the config resolve against. */
  baseDir: string;
}

export interface LoadOptions {
  /** Explicit `--config`; a missing explicit file is an error, a missing default is not. */
  file?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export type LoadResult = { ok: true; value: LoadedConfig } | { ok: false; error: ConfigError };

/**
 * Reads, substitutes and validates the config. Never throws for bad input: the caller decides
 * (the CLI prints every problem and exits 2). `.env` beside the config fills variables the
 * environment does not already define.
 */
export function loadConfig(options: LoadOptions = {}): LoadResult {
  const cwd = options.cwd ?? process.cwd();
  const explicit = options.file !== undefined;
  const file = path.resolve(cwd, options.file ?? DEFAULT_CONFIG_FILE);
  const baseDir = path.dirname(file);
  const env = { ...readDotenv(baseDir), ...readDotenv(cwd), ...(options.env ?? process.env) };

  if (!existsSync(file)) {
    if (explicit) return fail(file, [{ path: '', message: `config file not found: ${file}` }]);
    return validate(undefined, {}, cwd, env);
  }

  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return fail(file, [{ path: '', message: `cannot read: ${(err as Error).message}` }]);
  }

  const parsed = parseConfigText(file, text);
  if (!parsed.ok) return fail(file, parsed.problems);
  return configFromRaw(parsed.value, { file, env });
}

/** The environment a config file's `${NAME}` references are read from: `.env` files under the process's. */
export function configEnv(file: string, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Record<string, string | undefined> {
  const cwd = options.cwd ?? process.cwd();
  return { ...readDotenv(path.dirname(file)), ...readDotenv(cwd), ...(options.env ?? process.env) };
}

/**
 * A parsed file's value (before `${NAME}` substitution) to a config, as `loadConfig` does it:
 * substitution, OpenClaw's spellings, the schema. The config editor validates a patched file
 * with it before writing anything.
 */
export function configFromRaw(raw: unknown, options: { file: string; env: Record<string, string | undefined> }): LoadResult {
  const problems: ConfigProblem[] = [];
  const substituted = substituteEnv(raw, options.env, [], problems);
  if (problems.length > 0) return fail(options.file, problems);
  return validate(options.file, substituted, path.dirname(options.file), options.env);
}

/** Validates an in-memory config object (tests, embedding). */
export function parseConfig(raw: unknown, file?: string): LoadResult {
  return validate(file, raw ?? {}, file ? path.dirname(file) : process.cwd());
}

/** OpenClaw's spellings are read into Warden's first (src/config/openclaw), then the schema decides. */
function validate(file: string | undefined, raw: unknown, baseDir: string, env: Record<string, string | undefined> = {}): LoadResult {
  const translated = translateOpenClaw(raw ?? {});
  const result = wardenConfigSchema.safeParse(translated.value, { jitless: true });
  const problems = [...translated.problems, ...(result.success ? [] : restoreWrittenPaths(problemsFromZod(wardenConfigSchema, result.error.issues), translated.renamed))];
  if (problems.length > 0 || !result.success) return fail(file, problems);
  const envProblems = [...applyPortEnv(result.data, env), ...applySandboxIdEnv(result.data, env)];
  if (envProblems.length > 0) return fail(file, envProblems);
  return { ok: true, value: { config: result.data, file, baseDir } };
}

/**
 * `WARDEN_SANDBOX_ID` gives the sandbox's host uid and gid where the file names none
 * (sandbox-id.ts). Written into the loaded config, so a value from a `.env` file counts as one
 * from the environment does; a malformed value stops the load, naming the variable.
 */
function applySandboxIdEnv(config: WardenConfig, env: Record<string, string | undefined>): ConfigProblem[] {
  const given = env[SANDBOX_ID_ENV];
  if (given === undefined || given.trim() === '') return [];
  const setting = sandboxIdSetting(given);
  if (!setting.ok) return [{ path: 'tools.exec.sandbox.uid', message: setting.error }];
  // An absent block is the schema's defaults: spelled out here to carry the ids.
  const sandbox = (config.tools.exec ??= execConfig.parse({})).sandbox;
  sandbox.uid ??= setting.id;
  sandbox.gid ??= setting.id;
  return [];
}

/**
 * `WARDEN_PORT` moves the web chat (`channels.web.port`) and `WARDEN_OPS_PORT` the ops listener
 * (`ops.port`) over what the file says; `warden start --port`/`--ops-port` set them. Applied
 * on every load, so a config reload keeps the port the process was started with.
 */
export const PORT_ENV = { WARDEN_PORT: 'channels.web.port', WARDEN_OPS_PORT: 'ops.port' } as const;

function applyPortEnv(config: WardenConfig, env: Record<string, string | undefined>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [name, key] of Object.entries(PORT_ENV)) {
    const given = env[name];
    if (given === undefined || given.trim() === '') continue;
    const port = parsePort(given);
    if (port === undefined) {
      problems.push({ path: key, message: `${name}="${given}" is not a port: expected a whole number from 0 to 65535` });
      continue;
    }
    if (name === 'WARDEN_PORT') config.channels.web.port = port;
    else config.ops.port = port;
  }
  return problems;
}

/** A TCP port written as decimal digits, 0–65535; anything else (`3e3`, `0x10`, `-1`) is not one. */
export function parsePort(text: string): number | undefined {
  const t = text.trim();
  if (!/^\d{1,5}$/.test(t)) return undefined;
  const n = Number(t);
  return n <= 65535 ? n : undefined;
}

function fail(file: string | undefined, problems: ConfigProblem[]): LoadResult {
  return { ok: false, error: new ConfigError(file, problems) };
}

/** A config file's text as a value, by the file's extension; errors name what is malformed. */
export function parseConfigText(file: string, text: string): { ok: true; value: unknown } | { ok: false; problems: ConfigProblem[] } {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.json5' || ext === '.json') {
    try {
      return { ok: true, value: json5().parse(text) };
    } catch (err) {
      return { ok: false, problems: [{ path: '', message: json5ProblemMessage(text, err as Error) }] };
    }
  }
  if (ext === '.yaml' || ext === '.yml') {
    const doc = yaml().parseDocument(text, { prettyErrors: true, uniqueKeys: true });
    if (doc.errors.length > 0) {
      return { ok: false, problems: yamlProblemMessages(text, doc.errors).map((message) => ({ path: '', message })) };
    }
    return { ok: true, value: doc.toJS() };
  }
  return { ok: false, problems: [{ path: '', message: `unsupported config extension "${ext}": use .yaml, .yml, .json5 or .json` }] };
}

/** `${NAME}` and `${NAME:-default}` in string values; an unset variable without default is a problem. */
function substituteEnv(value: unknown, env: Record<string, string | undefined>, at: PropertyKey[], problems: ConfigProblem[]): unknown {
  if (typeof value === 'string') {
    return replaceEnvReferences(value, (name, fallback) => {
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      problems.push({ path: formatPath(at), message: `environment variable ${name} is not set (referenced as \${${name}})` });
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, [...at, i], problems));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v, env, [...at, k], problems)]));
  }
  return value;
}

function readDotenv(dir: string): Record<string, string> {
  const file = path.join(dir, '.env');
  if (!existsSync(file)) return {};
  try {
    return parseDotenv(readFileSync(file));
  } catch {
    return {};
  }
}
