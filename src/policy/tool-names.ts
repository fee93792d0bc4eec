/**
 * Tool-name normalisation (semantics §1): every name in a policy, a hook matcher or a tool call
 * goes through `normalizeToolName` before any comparison, so `Bash`, ` exec ` and `exec` are one
 * tool.
 */

/**
 * Spellings that mean a canonical tool. `automations` is OpenClaw's id for the tool Warden calls
 * `cron`, and `view_image` its id for `image`; accepting them keeps an OpenClaw
 * `deny: [automations]` or `allow: [view_image]` from silently missing the tool. `update_plan`
 * is OpenClaw's former id of `progress_card` (its policy renames it the same way).
 */
export const TOOL_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  bash: 'exec',
  'apply-patch': 'apply_patch',
  automations: 'cron',
  view_image: 'image',
  update_plan: 'progress_card',
});

/** Trimmed, lower-cased, alias-resolved; a non-string becomes `""` (callers drop blanks). */
export function normalizeToolName(name: unknown): string {
  if (typeof name !== 'string') return '';
  const lower = name.trim().toLowerCase();
  return Object.hasOwn(TOOL_ALIASES, lower) ? TOOL_ALIASES[lower]! : lower;
}

/** Normalises a list and drops blank entries, keeping order and duplicates out. */
export function normalizeToolList(names: readonly unknown[] | undefined): string[] {
  if (!names) return [];
  const out: string[] = [];
  const seen = new Set<string>();
  for (const name of names) {
    const n = normalizeToolName(name);
    if (n && !seen.has(n)) {
      seen.add(n);
      out.push(n);
    }
  }
  return out;
}
