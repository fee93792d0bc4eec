/**
 * The empty explicit allowlist guard (semantics §3, reference §2.6): when someone wrote an
 * allowlist and nothing callable is left, the turn fails with an error instead of silently
 * running a model without tools.
 */

export interface AllowlistSource {
  label: string;
  entries: readonly string[];
}

export type GuardReason = 'disabled' | 'no-match' | 'no-tool-support';

export const GUARD_REASONS: Readonly<Record<GuardReason, string>> = {
  disabled: 'tools are disabled for this run',
  'no-match': 'no registered tools matched',
  'no-tool-support': 'the selected model does not support tools',
};

/** The guard's error, or undefined when it does not apply (tools remain, or no explicit allowlist). */
export function emptyAllowlistError(sources: readonly AllowlistSource[], remaining: number, reason: GuardReason): string | undefined {
  if (remaining > 0) return undefined;
  const named = sources.filter((s) => s.entries.length > 0);
  if (named.length === 0) return undefined;
  const list = named.map((s) => `${s.label}: ${s.entries.join(', ')}`).join('; ');
  return `No callable tools remain after resolving explicit tool allowlist (${list}); ${GUARD_REASONS[reason]}. Fix the allowlist or enable the plugin that registers the requested tool.`;
}
