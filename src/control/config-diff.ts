import { isDeepStrictEqual } from 'node:util';

/** One changed leaf of a config: its key path and both values (`undefined` = absent). Arrays are leaves. */
export interface ConfigChange {
  path: string[];
  before: unknown;
  after: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The leaves that differ between two config values, in key order. */
export function diffConfig(before: unknown, after: unknown, at: string[] = []): ConfigChange[] {
  if (isDeepStrictEqual(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((k) => diffConfig(before[k], after[k], [...at, k]));
  }
  if (isObject(before) && after === undefined) return diffConfig(before, {}, at).map((c) => ({ ...c, after: undefined }));
  if (isObject(after) && before === undefined) return diffConfig({}, after, at).map((c) => ({ ...c, before: undefined }));
  return [{ path: at, before, after }];
}

/** `tools.exec.allowlist`, `channels.discord.guilds["111"]`: the path as error messages write it. */
export function dotted(path: readonly string[]): string {
  return path.map((p, i) => (/^[A-Za-z_$][\w$-]*$/.test(p) ? (i === 0 ? p : `.${p}`) : `[${JSON.stringify(p)}]`)).join('');
}

/** Whether `path` starts with `pattern`, where `*` in the pattern matches any one key. */
export function startsWith(path: readonly string[], pattern: readonly string[]): boolean {
  return pattern.length <= path.length && pattern.every((p, i) => p === '*' || p === path[i]);
}
