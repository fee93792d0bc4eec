import type { Document } from 'yaml';
import { yaml } from '../../util/yaml.js';
import { isPlainObject } from './merge-patch.js';

/**
 * Applies a merge patch to a YAML document in place, node by node, so everything the patch does
 * not touch — comments, key order, quoting, anchors, `${NAME}` references — stays as written.
 * A scalar replaced by a scalar keeps its node (and the comment on it).
 */
export function applyMergePatchToYaml(doc: Document, patch: Record<string, unknown>, at: string[] = []): void {
  for (const [key, value] of Object.entries(patch)) {
    const path = [...at, key];
    if (value === null) {
      if (doc.hasIn(path)) doc.deleteIn(path);
      continue;
    }
    const existing = doc.getIn(path, true);
    if (isPlainObject(value) && yaml().isMap(existing)) {
      applyMergePatchToYaml(doc, value, path);
      continue;
    }
    if (yaml().isScalar(existing) && (value === null || typeof value !== 'object')) {
      existing.value = value;
      continue;
    }
    ensureParents(doc, at);
    doc.setIn(path, doc.createNode(isPlainObject(value) ? stripNulls(value) : value));
  }
}

/** Parents that are missing (or scalars) become maps, so `setIn` has somewhere to write. */
function ensureParents(doc: Document, at: string[]): void {
  for (let i = 1; i <= at.length; i++) {
    const node = doc.getIn(at.slice(0, i), true);
    if (!yaml().isMap(node)) doc.setIn(at.slice(0, i), doc.createNode({}));
  }
}

/** A new object from a patch: its `null` members mean "absent". */
function stripNulls(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null) continue;
    out[k] = isPlainObject(v) ? stripNulls(v) : v;
  }
  return out;
}
