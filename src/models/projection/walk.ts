export type Schema = { [key: string]: unknown };

export const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords whose value is a map of name → subschema. The names are data, never keywords. */
const MAP_KEYS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'] as const;
/** Keywords whose value is one subschema. */
const ONE_KEYS = ['additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'additionalItems', 'unevaluatedProperties', 'unevaluatedItems'] as const;
/** Keywords whose value is a list of subschemas. */
const LIST_KEYS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;

/**
 * Returns a copy of `node` with `fn` applied to each direct subschema (bottom-up when `fn`
 * itself recurses). Values that are not schemas (booleans, annotations) are copied as they are.
 */
export function mapSubschemas(node: Schema, fn: (child: Schema) => Schema): Schema {
  const out: Schema = { ...node };
  for (const key of MAP_KEYS) {
    const map = node[key];
    if (isSchema(map)) out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, isSchema(v) ? fn(v) : v]));
  }
  for (const key of ONE_KEYS) {
    const child = node[key];
    if (isSchema(child)) out[key] = fn(child);
  }
  for (const key of LIST_KEYS) {
    const list = node[key];
    if (Array.isArray(list)) out[key] = list.map((v) => (isSchema(v) ? fn(v) : v));
  }
  const items = node.items;
  if (isSchema(items)) out.items = fn(items);
  else if (Array.isArray(items)) out.items = items.map((v) => (isSchema(v) ? fn(v) : v));
  return out;
}

/** Applies `fn` to every schema node, children first. */
export function transformDeep(node: Schema, fn: (node: Schema) => Schema): Schema {
  return fn(mapSubschemas(node, (child) => transformDeep(child, fn)));
}

/** Removes `keywords` from every schema node (never from property names). */
export function stripKeywords(node: Schema, keywords: ReadonlySet<string>): Schema {
  if (keywords.size === 0) return node;
  return transformDeep(node, (n) => {
    const out: Schema = {};
    for (const [k, v] of Object.entries(n)) if (!keywords.has(k)) out[k] = v;
    return out;
  });
}
