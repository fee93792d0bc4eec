import picomatch from 'picomatch';
import type { WardenConfig } from '../config/schema/index.js';
import type { ToolMeta } from './tool-meta.js';
import type { TurnContext } from './context.js';

/**
 * The filters in front of the pipeline (semantics §3): message provider, model provider,
 * owner-only. Each answers for one tool, with the rule and config key that decided, so the
 * surface and `--explain` share one decision.
 */

export interface FilterDecision {
  kept: boolean;
  rule: string;
  key?: string | undefined;
}

export const MESSAGE_PROVIDER_FILTER = 'message-provider';
export const MODEL_PROVIDER_FILTER = 'model-provider';
export const OWNER_ONLY_FILTER = 'owner-only';

/** Tools an inbound provider cannot use: a voice channel has no use for text-to-speech output. */
export const MESSAGE_PROVIDER_DROPS: Readonly<Record<string, readonly string[]>> = {
  voice: ['tts'],
  'discord-voice': ['tts'],
};

/** The tools this inbound provider drops; undefined when it drops none. */
export function messageProviderDrops(ctx: TurnContext): readonly string[] | undefined {
  const provider = ctx.provider.trim().toLowerCase();
  return Object.hasOwn(MESSAGE_PROVIDER_DROPS, provider) ? MESSAGE_PROVIDER_DROPS[provider]! : undefined;
}

export function messageProviderFilter(tool: ToolMeta, ctx: TurnContext): FilterDecision {
  const provider = ctx.provider.trim().toLowerCase();
  const drops = Object.hasOwn(MESSAGE_PROVIDER_DROPS, provider) ? MESSAGE_PROVIDER_DROPS[provider]! : undefined;
  if (drops?.includes(tool.id)) return { kept: false, rule: `provider "${provider}" does not offer ${tool.id}` };
  return { kept: true, rule: `provider "${provider}" offers it` };
}

const APPLY_PATCH_KEY = 'tools.exec.applyPatch.allowModels';
const DEFAULT_APPLY_PATCH_MODELS = ['openai/*'];
const modelMatchers = new WeakMap<WardenConfig, (model: string) => string | undefined>();

/**
 * apply_patch's model gate. Patterns are picomatch globs on the lower-cased `provider/model`; a
 * pattern without `/` matches the model id alone. An empty list admits every model. No model
 * at all matches nothing, so apply_patch is removed when no model is configured.
 */
function applyPatchMatcher(config: WardenConfig): (model: string) => string | undefined {
  let matcher = modelMatchers.get(config);
  if (!matcher) {
    const patterns = config.tools.exec?.applyPatch.allowModels ?? DEFAULT_APPLY_PATCH_MODELS;
    const compiled = patterns.map((p) => ({ p, re: picomatch.makeRe(p.trim().toLowerCase(), { dot: true }), bare: !p.includes('/') }));
    const enabled = config.tools.exec?.applyPatch.enabled !== false;
    matcher = (model) => {
      if (!enabled) return undefined;
      if (compiled.length === 0) return '(empty list: every model)';
      const ref = model.trim().toLowerCase();
      const id = ref.slice(ref.indexOf('/') + 1);
      return compiled.find(({ re, bare }) => re.test(bare ? id : ref))?.p;
    };
    modelMatchers.set(config, matcher);
  }
  return matcher;
}

/** Whether this turn's model may see apply_patch (the filter's decision, without its explanation). */
export function applyPatchAllowed(ctx: TurnContext, config: WardenConfig): boolean {
  return ctx.model !== undefined && applyPatchMatcher(config)(ctx.model) !== undefined;
}

export function modelProviderFilter(tool: ToolMeta, ctx: TurnContext, config: WardenConfig): FilterDecision {
  if (ctx.modelSupportsTools === false) return { kept: false, rule: `model ${ctx.model ?? '(none)'} does not support tools` };
  if (tool.id !== 'apply_patch' || tool.source.kind !== 'core') return { kept: true, rule: 'no model restriction' };
  const key = config.tools.exec ? APPLY_PATCH_KEY : `${APPLY_PATCH_KEY} (default ${JSON.stringify(DEFAULT_APPLY_PATCH_MODELS)})`;
  if (!ctx.model) return { kept: false, rule: 'no model is configured, so none matches the apply_patch model list', key };
  if (config.tools.exec?.applyPatch.enabled === false) return { kept: false, rule: 'apply_patch is turned off', key: 'tools.exec.applyPatch.enabled' };
  const pattern = applyPatchMatcher(config)(ctx.model);
  return pattern !== undefined
    ? { kept: true, rule: `model ${ctx.model} matches "${pattern}"`, key }
    : { kept: false, rule: `model ${ctx.model} is not in the apply_patch model list`, key };
}

export function ownerOnlyFilter(tool: ToolMeta, ctx: TurnContext): FilterDecision {
  if (!tool.ownerOnly) return { kept: true, rule: 'not owner-only' };
  const key = `owners.${ctx.provider.trim().toLowerCase()}`;
  if (ctx.senderIsOwner) return { kept: true, rule: `sender ${ctx.senderId ?? ''} is an owner`.trim(), key };
  return { kept: false, rule: `owner-only tool; sender ${ctx.senderId ?? '(none)'} is not an owner`, key };
}
