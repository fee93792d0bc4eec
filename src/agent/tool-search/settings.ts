import type { WardenConfig } from '../../config/schema/index.js';

/**
 * `tools.toolSearch` resolved: off (Warden's default, OpenClaw's `false`), or the model sees
 * the core file and shell tools directly and finds the rest through tool_search. OpenClaw's
 * `true` and `mode: code` ask for its JavaScript bridge; Warden runs them as `tools`, as
 * OpenClaw does when it cannot start the bridge.
 */
export interface ToolSearchSettings {
  mode: 'tools' | 'directory';
  defaultLimit: number;
  maxLimit: number;
  /** Engage only above this many deferred tools, or schema tokens (either); absent: always. */
  threshold?: { tools?: number; schemaTokens?: number };
}

export function toolSearchSettings(config: WardenConfig): ToolSearchSettings | undefined {
  const raw = config.tools.toolSearch;
  if (raw === undefined || raw === false) return undefined;
  const options = raw === true ? {} : raw;
  if (options.enabled === false) return undefined;
  const maxLimit = Math.min(Math.max(options.maxSearchLimit ?? 20, 1), 50);
  const t = options.threshold;
  const threshold = t === undefined ? undefined : typeof t === 'number' ? { tools: t } : { ...(t.tools !== undefined ? { tools: t.tools } : {}), ...(t.schemaTokens !== undefined ? { schemaTokens: t.schemaTokens } : {}) };
  return {
    mode: options.mode === 'directory' ? 'directory' : 'tools',
    maxLimit,
    defaultLimit: Math.min(Math.max(options.searchDefaultLimit ?? 8, 1), maxLimit),
    ...(threshold ? { threshold } : {}),
  };
}

/** About what a tool definition costs in the prompt: a token per 4 characters of its JSON. */
export function schemaTokens(tools: ReadonlyArray<{ id: string; description: string; parameters: unknown }>): number {
  let chars = 0;
  for (const t of tools) chars += t.id.length + (t.description?.length ?? 0) + (JSON.stringify(t.parameters) ?? '').length + 30;
  return Math.ceil(chars / 4);
}

/**
 * Whether Tool Search replaces these deferred tools this turn: always without a threshold;
 * with one, when they are more than `threshold.tools` or their schemas more than
 * `threshold.schemaTokens`. Below it the model sees every schema and no meta tool. Pure.
 */
export function toolSearchEngaged(settings: ToolSearchSettings, deferred: ReadonlyArray<{ id: string; description: string; parameters: unknown }>): boolean {
  if (deferred.length === 0) return false;
  const t = settings.threshold;
  if (!t) return true;
  if (t.tools !== undefined && deferred.length > t.tools) return true;
  return t.schemaTokens !== undefined && schemaTokens(deferred) > t.schemaTokens;
}

/** Tools that stay visible: the coding primitives, and in directory mode the delivery tool too. */
export function directTools(mode: ToolSearchSettings['mode']): ReadonlySet<string> {
  const base = ['read', 'write', 'edit', 'apply_patch', 'exec', 'process'];
  return new Set(mode === 'directory' ? [...base, 'message'] : base);
}
