import { isSchema, transformDeep, type Schema } from './walk.js';

/** Keywords Gemini's function declarations reject. */
export const GEMINI_UNSUPPORTED = new Set([
  '~optional',
  'patternProperties',
  'additionalProperties',
  '$schema',
  '$id',
  '$ref',
  '$defs',
  'definitions',
  'examples',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'multipleOf',
  'pattern',
  'format',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'not',
]);

const isNullSchema = (s: unknown) => isSchema(s) && (s.type === 'null' || (Array.isArray(s.enum) && s.enum.length === 1 && s.enum[0] === null));

/**
 * Gemini's schema subset: no validation keywords, string-only enums, one type per node, no
 * null variants, and unions reduced to what Gemini reads.
 */
export function cleanForGemini(root: Schema): Schema {
  return transformDeep(root, (input) => {
    let node: Schema = {};
    for (const [k, v] of Object.entries(input)) if (!GEMINI_UNSUPPORTED.has(k)) node[k] = v;

    if ('const' in node) {
      const { const: value, ...rest } = node;
      node = { ...rest, enum: [value] };
    }
    if (Array.isArray(node.type)) {
      const types = node.type.filter((t) => t !== 'null');
      node.type = types[0] ?? 'string';
    }
    if (Array.isArray(node.enum)) {
      const values = [...new Set(node.enum.filter((v) => v !== null).map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))))];
      node.enum = values;
      node.type = 'string';
    }
    for (const key of ['anyOf', 'oneOf'] as const) {
      if (!Array.isArray(node[key])) continue;
      node = collapseUnion(node, key);
    }
    if (Array.isArray(node.allOf)) node = mergeAllOf(node);
    if (isSchema(node.properties) && Array.isArray(node.required)) {
      const props = node.properties;
      node.required = (node.required as string[]).filter((r) => r in props);
    }
    return node;
  });
}

function collapseUnion(node: Schema, key: 'anyOf' | 'oneOf'): Schema {
  const { [key]: list, ...rest } = node;
  const variants = (list as unknown[]).filter((v) => isSchema(v) && !isNullSchema(v)) as Schema[];
  if (variants.length === 0) return rest;
  if (variants.length === 1) return { ...(variants[0] as Schema), ...rest };
  // A union of literals (each an enum, already stringified) is one string enum.
  if (variants.every((v) => Array.isArray(v.enum))) {
    const values = [...new Set(variants.flatMap((v) => v.enum as string[]))];
    return { ...rest, type: 'string', enum: values };
  }
  const types = new Set(variants.map((v) => v.type));
  if (types.size === 1 && typeof variants[0]?.type === 'string' && variants[0].type !== 'object' && variants[0].type !== 'array') {
    return { ...rest, type: variants[0].type };
  }
  return { ...(variants[0] as Schema), ...rest };
}

function mergeAllOf(node: Schema): Schema {
  const { allOf, ...rest } = node;
  let out: Schema = { ...rest };
  for (const part of (allOf as unknown[]).filter(isSchema)) {
    const merged: Schema = { ...part, ...out };
    if (isSchema(part.properties) || isSchema(out.properties)) merged.properties = { ...(part.properties as Schema), ...(out.properties as Schema) };
    const req = [...(Array.isArray(part.required) ? part.required : []), ...(Array.isArray(out.required) ? out.required : [])];
    if (req.length > 0) merged.required = [...new Set(req)];
    out = merged;
  }
  return out;
}
