import type { JsonSchema, ModelTool, ProviderApi } from '../types.js';
import { cleanForGemini } from './gemini.js';
import { wireName } from './names.js';
import { cleanOpenApi, fillArrayItems, normalizeTopLevel } from './normalize.js';
import { inlineRefs } from './refs.js';
import { isSchema, stripKeywords, type Schema } from './walk.js';

/** Who the schemas are for: the wire API plus what the model id says about its quirks. */
export interface ProjectionTarget {
  api: ProviderApi;
  provider: string;
  model: string;
  /** From config (`models.providers.<name>.unsupportedSchemaKeywords`), added to the built-in table. */
  unsupportedKeywords?: readonly string[] | undefined;
}

export interface ProjectedTool extends ModelTool {
  /** The catalog id the wire name stands for. */
  id: string;
}

export interface ProjectionDiagnostic {
  tool: string;
  /** `omitted`: the tool is not sent; `renamed`: sent under another name. */
  kind: 'omitted' | 'renamed';
  message: string;
}

export interface ProjectionResult {
  tools: ProjectedTool[];
  diagnostics: ProjectionDiagnostic[];
  /** Wire name → catalog id, to map the model's calls back. */
  idByWireName: Map<string, string>;
}

/** Per-model keywords the provider rejects (reference §10 step 6). */
const MODEL_KEYWORD_QUIRKS: Array<{ when: (t: ProjectionTarget) => boolean; keywords: string[] }> = [
  { when: (t) => t.provider === 'xai' || /^grok/i.test(t.model), keywords: ['minContains', 'maxContains'] },
  { when: (t) => t.provider === 'lmstudio', keywords: ['minContains', 'maxContains', 'pattern'] },
];

/** Gemini's schema rules apply to Gemini models wherever they are served, never to Anthropic. */
export function usesGeminiSchema(target: ProjectionTarget): boolean {
  if (target.api === 'anthropic') return false;
  return target.api === 'gemini' || /google|gemini/i.test(target.provider) || /gemini/i.test(target.model);
}

export function unsupportedKeywords(target: ProjectionTarget): Set<string> {
  const out = new Set(target.unsupportedKeywords ?? []);
  for (const quirk of MODEL_KEYWORD_QUIRKS) if (quirk.when(target)) for (const k of quirk.keywords) out.add(k);
  return out;
}

export type SchemaProjection = { ok: true; schema: JsonSchema } | { ok: false; reason: string };

/** Projects one parameters schema (reference §10 steps 1–6 and 8). Pure. */
export function projectSchema(parameters: JsonSchema, target: ProjectionTarget): SchemaProjection {
  let schema: Schema;
  try {
    // A deep copy that also rejects cycles and values JSON cannot carry.
    schema = JSON.parse(JSON.stringify(parameters)) as Schema;
  } catch (err) {
    return { ok: false, reason: `schema is not JSON: ${(err as Error).message}` };
  }
  if (!isSchema(schema)) return { ok: false, reason: 'schema is not a JSON object' };

  const inlined = inlineRefs(schema);
  schema = inlined.schema;
  const gemini = usesGeminiSchema(target);
  if (inlined.unresolved.length > 0 && gemini) {
    return { ok: false, reason: `unresolvable $ref ${inlined.unresolved.join(', ')} (Gemini cannot follow references)` };
  }
  schema = cleanOpenApi(schema);
  const top = normalizeTopLevel(schema);
  if (!top.ok) return top;
  schema = fillArrayItems(top.schema);
  if (gemini) schema = cleanForGemini(schema);
  schema = stripKeywords(schema, unsupportedKeywords(target));
  if (target.api === 'openai' && Object.keys((schema.properties as Schema | undefined) ?? {}).length === 0) {
    // OpenAI's strict-compat shape for tools without parameters.
    schema = { ...schema, type: 'object', properties: {}, required: [], additionalProperties: false };
  }
  return { ok: true, schema };
}

const cache = new WeakMap<object, Map<string, SchemaProjection>>();
const targetKey = (t: ProjectionTarget) => `${t.api}|${t.provider}|${t.model}|${(t.unsupportedKeywords ?? []).join(',')}`;

/** Memoised per schema object and target: the same tool definitions are projected every turn. */
function projectCached(parameters: JsonSchema, target: ProjectionTarget): SchemaProjection {
  let byTarget = cache.get(parameters);
  if (!byTarget) cache.set(parameters, (byTarget = new Map()));
  const key = targetKey(target);
  let result = byTarget.get(key);
  if (!result) byTarget.set(key, (result = projectSchema(parameters, target)));
  return result;
}

/**
 * Projects a turn's tools for one model. A tool whose schema cannot be projected, or whose
 * name collides after the provider's name rules, is left out with a diagnostic rather than
 * sent half-broken.
 */
export function projectTools(
  tools: ReadonlyArray<{ id: string; description: string; parameters: JsonSchema }>,
  target: ProjectionTarget,
): ProjectionResult {
  const out: ProjectedTool[] = [];
  const diagnostics: ProjectionDiagnostic[] = [];
  const idByWireName = new Map<string, string>();
  for (const tool of tools) {
    const projected = projectCached(tool.parameters, target);
    if (!projected.ok) {
      diagnostics.push({ tool: tool.id, kind: 'omitted', message: `not sent to ${target.provider}/${target.model}: ${projected.reason}` });
      continue;
    }
    const name = wireName(tool.id, target.api);
    const taken = idByWireName.get(name);
    if (taken !== undefined) {
      diagnostics.push({ tool: tool.id, kind: 'omitted', message: `not sent: its ${target.api} name "${name}" is already used by "${taken}"` });
      continue;
    }
    if (name !== tool.id) diagnostics.push({ tool: tool.id, kind: 'renamed', message: `sent to ${target.api} as "${name}"` });
    idByWireName.set(name, tool.id);
    out.push({ id: tool.id, name, description: tool.description, parameters: projected.schema });
  }
  return { tools: out, diagnostics, idByWireName };
}
