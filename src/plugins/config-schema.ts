import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ErrorObject } from 'ajv';

/**
 * A plugin's config against the JSON Schema of its manifest (`configSchema`), with Ajv. Errors
 * name the key path the operator wrote (`plugins.entries.incidents.config.baseUrl: …`).
 * Defaults the schema declares are filled in; the caller's object is not modified.
 * `format` keywords are not checked (no format vocabulary is loaded).
 */

export type ConfigCheck = { ok: true; value: Record<string, unknown> } | { ok: false; errors: string[] };

// Ajv is loaded on the first plugin that declares a schema: most commands never need it, and it
// costs more to load than the rest of the CLI's policy code.
let ajv: AjvClass | undefined;
function validator(): AjvClass {
  if (!ajv) {
    const { Ajv } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
    ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, logger: false });
  }
  return ajv;
}
const compiled = new WeakMap<object, ReturnType<AjvClass['compile']> | { error: string }>();

export function checkPluginConfig(pluginId: string, schema: object | undefined, config: Record<string, unknown> | undefined, where = `plugins.entries.${pluginId}.config`): ConfigCheck {
  if (schema === undefined) {
    if (config !== undefined && Object.keys(config).length > 0) {
      return { ok: false, errors: [`${where}: plugin ${pluginId} declares no configSchema in its manifest, so its config cannot be checked; remove the config or add a configSchema`] };
    }
    return { ok: true, value: {} };
  }
  let validate = compiled.get(schema);
  if (!validate) {
    try {
      validate = validator().compile(schema);
    } catch (err) {
      validate = { error: (err as Error).message };
    }
    compiled.set(schema, validate);
  }
  if ('error' in validate) return { ok: false, errors: [`plugin ${pluginId}: configSchema is not a valid JSON Schema: ${validate.error}`] };
  const value = structuredClone(config ?? {});
  if (validate(value)) return { ok: true, value: value as Record<string, unknown> };
  return { ok: false, errors: (validate.errors ?? []).map((e) => formatError(where, e)) };
}

function formatError(where: string, e: ErrorObject): string {
  const segments = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  const params = e.params as { missingProperty?: string; additionalProperty?: string };
  if (e.keyword === 'required' && params.missingProperty) segments.push(params.missingProperty);
  if (e.keyword === 'additionalProperties' && params.additionalProperty) segments.push(params.additionalProperty);
  const pathText = segments.map((s) => (/^\d+$/.test(s) ? `[${s}]` : /^[A-Za-z_$][\w$]*$/.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`)).join('');
  const message = e.keyword === 'required' ? 'is required' : e.keyword === 'additionalProperties' ? 'is not a known key' : (e.message ?? 'is invalid');
  return `${where}${pathText}: ${message}`;
}
