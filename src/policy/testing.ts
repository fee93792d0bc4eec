import { parseConfig, type WardenConfig, type WardenConfigInput } from '../config/index.js';
import type { TurnContext } from './context.js';
import { resolveToolSurface, type SurfaceOptions, type SurfaceResult } from './surface.js';

/** Helpers for policy specs: a validated config and a context with explicit defaults. */

export function config(raw: WardenConfigInput | Record<string, unknown> = {}): WardenConfig {
  const result = parseConfig(raw);
  if (!result.ok) throw result.error;
  return result.value.config;
}

export function turn(overrides: Partial<TurnContext> = {}): TurnContext {
  return { agentId: 'main', provider: 'web', chat: 'dm', senderIsOwner: false, spawnDepth: 0, model: 'openai/gpt-5', ...overrides };
}

/** Every tool implemented and available, so specs see the policy alone. */
export const ALL_AVAILABLE: SurfaceOptions = { implemented: () => ({ ok: true }) };

export function surface(raw: Record<string, unknown>, ctx: Partial<TurnContext> = {}, options: Partial<SurfaceOptions> = {}): SurfaceResult {
  return resolveToolSurface(config(raw), turn(ctx), { ...ALL_AVAILABLE, ...options });
}

/** The label that removed `tool`, `kept` when the model gets it. */
export function fate(result: SurfaceResult, tool: string): string {
  if (result.tools.includes(tool)) return 'kept';
  return result.removed.find((r) => r.tool === tool)?.by ?? result.unavailable.find((u) => u.tool === tool)?.why ?? 'absent';
}
