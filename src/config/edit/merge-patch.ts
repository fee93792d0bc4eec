/**
 * JSON Merge Patch (RFC 7396): an object merges key by key, `null` removes a key, anything else
 * (arrays included) replaces the value. Pure; the inputs are not modified.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

/** One leaf a patch touches: its key path and what it sets (`undefined` = removed). */
export interface PatchLeaf {
  path: string[];
  value: unknown;
}

/** The assignments a merge patch makes, in order: objects descend, everything else is a leaf. */
export function patchLeaves(patch: unknown, at: string[] = []): PatchLeaf[] {
  if (!isPlainObject(patch)) return [{ path: at, value: patch }];
  const out: PatchLeaf[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) out.push({ path: [...at, key], value: undefined });
    else if (isPlainObject(value)) {
      const inner = patchLeaves(value, [...at, key]);
      out.push(...(inner.length > 0 ? inner : [{ path: [...at, key], value: {} }]));
    } else out.push({ path: [...at, key], value });
  }
  return out;
}

/** Why a value cannot be a merge patch for a config, or undefined. */
export function patchProblem(patch: unknown): string | undefined {
  if (!isPlainObject(patch)) return 'a config patch is a JSON object (a merge patch: keys to set, null to remove)';
  if (Object.keys(patch).length === 0) return 'the patch is empty';
  const bad = firstForbiddenKey(patch);
  return bad ? `key "${bad}" cannot be written` : undefined;
}

function firstForbiddenKey(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    for (const v of value) {
      const bad = firstForbiddenKey(v);
      if (bad) return bad;
    }
    return undefined;
  }
  if (!isPlainObject(value)) return undefined;
  for (const [k, v] of Object.entries(value)) {
    if (k === '__proto__' || k === 'constructor' || k === 'prototype') return k;
    const bad = firstForbiddenKey(v);
    if (bad) return bad;
  }
  return undefined;
}
