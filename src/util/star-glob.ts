/**
 * Globs whose only wildcard is `*` (any run of characters, newlines included), matched without
 * a regular expression: a regex with several `[\s\S]*` backtracks polynomially in the text, and
 * the text (a tool call's arguments, a tool name an MCP server chose) is not ours. The literal
 * parts between the stars are placed leftmost-first, which is optimal for `*`-only globs, so a
 * match costs a few `indexOf` calls.
 */

/** Whether `text` matches the glob split at its stars (`a*b*c` → `['a', 'b', 'c']`). */
export function starPartsMatch(parts: readonly string[], text: string): boolean {
  if (parts.length === 1) return text === parts[0];
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  const end = text.length - last.length;
  let at = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i]!;
    if (part === '') continue;
    const found = text.indexOf(part, at);
    if (found === -1 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}
