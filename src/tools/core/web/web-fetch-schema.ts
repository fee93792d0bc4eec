// web_fetch's argument schema, apart from its implementation (its extractor is large): the tool
// surface (src/app/core-descriptors.ts) reads it without loading the tool, and the tool validates
// its calls against the same object. Its bounds come from the config, so it is built per config.
import type { WardenConfig } from '../../../config/schema/index.js';
import { webFetchSettings } from './availability.js';

/** Reference B7 defaults (also the schema's). */
export const WEB_FETCH_LIMITS = { defaultMaxChars: 20_000, maxCharsCap: 20_000, maxResponseBytes: 750_000, timeoutMs: 30_000, maxRedirects: 3 };

/** The characters a call returns when it names none: the configured default, never above the cap. */
export function webFetchDefaultMaxChars(config: WardenConfig): number {
  const settings = webFetchSettings(config);
  return Math.min(settings.maxChars ?? WEB_FETCH_LIMITS.defaultMaxChars, settings.maxCharsCap);
}

const built = new WeakMap<WardenConfig, ReturnType<typeof build>>();

/** The schema for `config`: one object per config, so the surface and the tool hold the very same one. */
export function webFetchParameters(config: WardenConfig) {
  let parameters = built.get(config);
  if (!parameters) built.set(config, (parameters = build(config)));
  return parameters;
}

function build(config: WardenConfig) {
  return {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'The http(s) URL to fetch. Private, loopback and cloud-metadata addresses are refused.' },
      extractMode: { type: 'string', enum: ['markdown', 'text'], description: 'markdown (default) keeps headings, links and lists; text strips them.' },
      maxChars: { type: 'integer', minimum: 100, maximum: webFetchSettings(config).maxCharsCap, description: `Most characters of content to return (default ${webFetchDefaultMaxChars(config)}).` },
    },
    required: ['url'],
    additionalProperties: false,
  } as const;
}
