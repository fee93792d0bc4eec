import * as z from 'zod';
import { wardenConfigSchema } from '../schema/index.js';

type JsonSchema = Record<string, unknown>;
let whole: JsonSchema | undefined;

/** The config's JSON schema (input side: what a file may say), built once from the zod schema. */
function configJsonSchema(): JsonSchema {
  whole ??= z.toJSONSchema(wardenConfigSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return whole;
}

/**
 * The keys and types under a dotted config path (`tools.exec`, `channels.discord.guilds.*`), as
 * JSON schema cut `depth` levels down, so a model can write a patch the schema accepts. A record
 * or list member is addressed by any key (`guilds.111`, `list.0`) or `*`.
 */
export function configSchemaAt(dotted: string, depth = 3): { ok: true; path: string; schema: JsonSchema } | { ok: false; error: string } {
  let node: JsonSchema | undefined = configJsonSchema();
  const parts = dotted.split('.').filter(Boolean);
  for (const [i, part] of parts.entries()) {
    node = child(node!, part);
    if (!node) return { ok: false, error: `config.schema: no key "${parts.slice(0, i + 1).join('.')}"` };
  }
  return { ok: true, path: parts.join('.'), schema: prune(node!, depth) };
}

function child(node: JsonSchema, key: string): JsonSchema | undefined {
  for (const option of alternatives(node)) {
    const props = option.properties as Record<string, JsonSchema> | undefined;
    if (props && Object.hasOwn(props, key)) return props[key];
    if (option.additionalProperties && typeof option.additionalProperties === 'object') return option.additionalProperties as JsonSchema;
    if (option.items && typeof option.items === 'object' && (key === '*' || /^\d+$/.test(key))) return option.items as JsonSchema;
  }
  return undefined;
}

function alternatives(node: JsonSchema): JsonSchema[] {
  const list = (node.anyOf ?? node.oneOf ?? node.allOf) as JsonSchema[] | undefined;
  return list ? list.flatMap(alternatives) : [node];
}

function prune(node: unknown, depth: number): JsonSchema {
  if (!node || typeof node !== 'object') return node as JsonSchema;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node as JsonSchema)) {
    if (k === '$schema') continue;
    if ((k === 'properties' || k === 'additionalProperties' || k === 'items' || k === 'anyOf' || k === 'oneOf') && depth <= 0) {
      out[k] = k === 'properties' ? Object.keys(v as object) : typeof v === 'object' ? '…' : v;
      continue;
    }
    if (k === 'properties') out[k] = Object.fromEntries(Object.entries(v as JsonSchema).map(([pk, pv]) => [pk, prune(pv, depth - 1)]));
    else if (Array.isArray(v)) out[k] = v.map((x) => (x && typeof x === 'object' ? prune(x, depth - 1) : x));
    else if (v && typeof v === 'object') out[k] = prune(v, depth - 1);
    else out[k] = v;
  }
  return out;
}
