import { starPartsMatch } from '../util/star-glob.js';

/**
 * The `*`-only glob of grants and argument patterns: `*` matches any run of characters
 * (including none and newlines), `\*` a literal star, `\\` a literal backslash; everything else
 * is literal. No `?` or brackets, so a pattern saved from a real argument never widens by accident.
 */
export function globMatch(pattern: string, text: string): boolean {
  return starPartsMatch(globParts(pattern), text);
}

/** The literal parts between unescaped stars, escapes resolved. */
function globParts(pattern: string): string[] {
  const parts: string[] = [];
  let part = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && (pattern[i + 1] === '*' || pattern[i + 1] === '\\')) part += pattern[++i];
    else if (ch === '*') {
      parts.push(part);
      part = '';
    } else part += ch;
  }
  parts.push(part);
  return parts;
}

/** A pattern that matches exactly `text` and nothing else. */
export function escapeGlob(text: string): string {
  return text.replace(/[\\*]/g, (c) => `\\${c}`);
}
