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
}

export function toolSearchSettings(config: WardenConfig): ToolSearchSettings | undefined {
  const raw = config.tools.toolSearch;
  if (raw === undefined || raw === false) return undefined;
  const options = raw === true ? {} : raw;
  if (options.enabled === false) return undefined;
  const maxLimit = Math.min(Math.max(options.maxSearchLimit ?? 20, 1), 50);
  return {
    mode: options.mode === 'directory' ? 'directory' : 'tools',
    maxLimit,
    defaultLimit: Math.min(Math.max(options.searchDefaultLimit ?? 8, 1), maxLimit),
  };
}

/** Tools that stay visible: the coding primitives, and in directory mode the delivery tool too. */
export function directTools(mode: ToolSearchSettings['mode']): ReadonlySet<string> {
  const base = ['read', 'write', 'edit', 'apply_patch', 'exec', 'process'];
  return new Set(mode === 'directory' ? [...base, 'message'] : base);
}
