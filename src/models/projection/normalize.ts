import { isSchema, transformDeep, type Schema } from './walk.js';

const ANNOTATIONS = ['discriminator', 'externalDocs', 'readOnly', 'writeOnly', 'xml', 'example'];

/** OpenAPI leftovers: `nullable` becomes a JSON-schema null, OpenAPI-only annotations go. */
export function cleanOpenApi(root: Schema): Schema {
  return transformDeep(root, (node) => {
    const { nullable, ...rest } = node;
    for (const key of ANNOTATIONS) delete rest[key];
    if (nullable !== true) return rest;
    if (Array.isArray(rest.anyOf) || Array.isArray(rest.oneOf) || Array.isArray(rest.allOf)) {
      return { anyOf: [rest, { type: 'null' }] };
    }
    const out: Schema = { ...rest };
    if (typeof rest.type === 'string') out.type = [rest.type, 'null'];
    else if (Array.isArray(rest.type) && !rest.type.includes('null')) out.type = [...rest.type, 'null'];
    if (Array.isArray(rest.enum) && !rest.enum.includes(null)) out.enum = [...rest.enum, null];
    return out;
  });
}

/** `type: "array"` without `items` gets `items: {}`; several providers reject it otherwise. */
export function fillArrayItems(root: Schema): Schema {
  return transformDeep(root, (node) => {
    const isArray = node.type === 'array' || (Array.isArray(node.type) && node.type.includes('array'));
    return isArray && node.items === undefined ? { ...node, items: {} } : node;
  });
}

export type TopLevel = { ok: true; schema: Schema } | { ok: false; reason: string };

const objectLike = (s: Schema) => s.type === 'object' || isSchema(s.properties);

/**
 * Every provider wants an object at the top. Unions of objects are flattened into one:
 * properties merged (enum values unioned), `required` the top-level one or else the keys every
 * variant requires. Anything that is not an object cannot be projected.
 */
export function normalizeTopLevel(schema: Schema): TopLevel {
  const keys = Object.keys(schema);
  if (keys.length === 0) return { ok: true, schema: { type: 'object', properties: {} } };

  const union = (Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined) as unknown[] | undefined;
  if (union && !isSchema(schema.properties)) return flattenUnion(schema, union);
  if (Array.isArray(schema.allOf) && !isSchema(schema.properties)) return mergeAllOf(schema, schema.allOf);

  if (schema.type !== undefined && schema.type !== 'object') {
    return { ok: false, reason: `top-level schema must describe an object, not ${JSON.stringify(schema.type)}` };
  }
  if (!isSchema(schema.properties)) {
    if (schema.type === 'object' || Array.isArray(schema.required)) return { ok: true, schema: { ...schema, type: 'object', properties: {} } };
    return { ok: false, reason: 'top-level schema describes no object (no type, properties or union of objects)' };
  }
  return { ok: true, schema: schema.type === 'object' ? schema : { ...schema, type: 'object' } };
}

function flattenUnion(schema: Schema, variants: unknown[]): TopLevel {
  const objects = variants.filter(isSchema).filter(objectLike);
  if (objects.length === 0) return { ok: false, reason: 'top-level union has no object variant' };
  const properties: Record<string, Schema> = {};
  const seenIn: Record<string, Schema[]> = {};
  for (const variant of objects) {
    for (const [name, prop] of Object.entries((variant.properties as Schema | undefined) ?? {})) {
      if (!isSchema(prop)) continue;
      (seenIn[name] ??= []).push(prop);
    }
  }
  for (const [name, props] of Object.entries(seenIn)) properties[name] = mergeProperty(props);

  const required = Array.isArray(schema.required)
    ? (schema.required as string[])
    : objects
        .map((v) => new Set(Array.isArray(v.required) ? (v.required as string[]) : []))
        .reduce((acc, set) => new Set([...acc].filter((k) => set.has(k))));
  const { anyOf: _a, oneOf: _o, ...rest } = schema;
  const out: Schema = { ...rest, type: 'object', properties, additionalProperties: schema.additionalProperties ?? true };
  const req = [...required].filter((k) => k in properties);
  if (req.length > 0) out.required = req;
  else delete out.required;
  return { ok: true, schema: out };
}

/** Same key in several variants: enum/const values unioned, `type` when all values share one JS type. */
function mergeProperty(props: Schema[]): Schema {
  const first = props[0] as Schema;
  if (props.length === 1) return first;
  const hasLiterals = props.some((p) => Array.isArray(p.enum) || 'const' in p);
  if (!hasLiterals) return first;
  const values: unknown[] = [];
  for (const p of props) {
    const list = Array.isArray(p.enum) ? p.enum : 'const' in p ? [p.const] : [];
    for (const v of list) if (!values.some((x) => JSON.stringify(x) === JSON.stringify(v))) values.push(v);
  }
  const out: Schema = {};
  for (const key of ['title', 'description', 'default']) if (first[key] !== undefined) out[key] = first[key];
  const jsTypes = new Set(values.map((v) => (v === null ? 'null' : typeof v)));
  if (jsTypes.size === 1) {
    const only = [...jsTypes][0];
    out.type = only === 'number' ? (values.every((v) => Number.isInteger(v)) ? 'integer' : 'number') : only;
  }
  out.enum = values;
  return out;
}

function mergeAllOf(schema: Schema, parts: unknown[]): TopLevel {
  const objects = parts.filter(isSchema);
  if (objects.length === 0 || !objects.every(objectLike)) return { ok: false, reason: 'top-level allOf mixes non-object schemas' };
  const properties: Schema = {};
  const required = new Set<string>();
  for (const part of objects) {
    Object.assign(properties, part.properties ?? {});
    for (const r of Array.isArray(part.required) ? (part.required as string[]) : []) required.add(r);
  }
  const { allOf: _drop, ...rest } = schema;
  return { ok: true, schema: { ...rest, type: 'object', properties, ...(required.size > 0 ? { required: [...required] } : {}) } };
}
