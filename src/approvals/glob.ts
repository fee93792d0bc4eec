/**
 * The `*`-only glob of grants and argument patterns: `*` matches any run of characters
 * (including none and newlines), `\*` a literal star, `\\` a literal backslash; everything else
 * is literal. No `?` or brackets, so a pattern saved from a real argument never widens by accident.
 */
export function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && (pattern[i + 1] === '*' || pattern[i + 1] === '\\')) {
      source += `\\${pattern[++i]}`;
    } else if (ch === '*') {
      source += '[\\s\\S]*';
    } else {
      source += ch.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}

export function globMatch(pattern: string, text: string): boolean {
  return globToRegExp(pattern).test(text);
}

/** A pattern that matches exactly `text` and nothing else. */
export function escapeGlob(text: string): string {
  return text.replace(/[\\*]/g, (c) => `\\${c}`);
}
