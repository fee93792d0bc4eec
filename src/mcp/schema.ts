import { normalizeTopLevel } from '../models/projection/normalize.js';
import { inlineRefs, SchemaTooLargeError } from '../models/projection/refs.js';
import { isSchema, stripKeywords, type Schema } from '../models/projection/walk.js';
import type { JsonSchema } from '../tools/types.js';

/**
 * An MCP server's `inputSchema` made fit for the surface and the call chain. The schema is the
 * server's answer, so it is bounded before anything walks it: its JSON size, its nesting, and
 * what inlining its `$ref`s would make (a few lines of refs can ask for billions of nodes).
 * Local `$ref`s are inlined, so the chain's argument check and every provider see one plain
 * schema. `pattern` is dropped: the argument check would run the server's regular expression
 * over the model's text in Warden's process (a backtracking pattern stalls it); the server
 * checks its own patterns. Pure.
 */

export const MAX_SCHEMA_BYTES = 64 * 1024;
export const MAX_SCHEMA_DEPTH = 48;
export const MAX_SCHEMA_NODES = 20_000;
/** After inlining. */
export const MAX_PREPARED_BYTES = 256 * 1024;

export type PreparedSchema = { ok: true; schema: JsonSchema } | { ok: false; why: string };

const STRIPPED = new Set(['pattern']);

export function prepareInputSchema(raw: unknown): PreparedSchema {
  if (raw === undefined || raw === null) return { ok: true, schema: { type: 'object', properties: {} } };
  if (!isSchema(raw)) return { ok: false, why: 'its input schema is not a JSON object' };
  let text: string;
  try {
    text = JSON.stringify(raw);
  } catch (err) {
    return { ok: false, why: `its input schema is not JSON: ${(err as Error).message}` };
  }
  if (text.length > MAX_SCHEMA_BYTES) return { ok: false, why: `its input schema is ${text.length} bytes (at most ${MAX_SCHEMA_BYTES})` };
  if (depthOf(raw) > MAX_SCHEMA_DEPTH) return { ok: false, why: `its input schema nests deeper than ${MAX_SCHEMA_DEPTH} levels` };
  let schema = JSON.parse(text) as Schema;
  try {
    schema = inlineRefs(schema, { maxNodes: MAX_SCHEMA_NODES }).schema;
  } catch (err) {
    if (err instanceof SchemaTooLargeError) return { ok: false, why: `its input ${err.message}` };
    throw err;
  }
  const size = JSON.stringify(schema).length;
  if (size > MAX_PREPARED_BYTES) return { ok: false, why: `its input schema is ${size} bytes once its $refs are inlined (at most ${MAX_PREPARED_BYTES})` };
  delete schema.$schema;
  const top = normalizeTopLevel(stripKeywords(schema, STRIPPED));
  if (!top.ok) return { ok: false, why: `its input schema: ${top.reason}` };
  return { ok: true, schema: top.schema };
}

/** Nesting depth of a JSON value, stopping as soon as it passes the limit. */
function depthOf(value: unknown, depth = 0): number {
  if (depth > MAX_SCHEMA_DEPTH || typeof value !== 'object' || value === null) return depth;
  let max = depth;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    max = Math.max(max, depthOf(child, depth + 1));
    if (max > MAX_SCHEMA_DEPTH) break;
  }
  return max;
}
