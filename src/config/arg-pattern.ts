import { linearRegexProblem } from '../util/linear-regex.js';

/**
 * Why an argPattern cannot be used, or undefined: a regex (`^…`, or NUL-joined) must be one the
 * linear-time engine runs; exact-argv bindings are compared as text; globs always work.
 */
export function argPatternProblem(argPattern: string): string | undefined {
  if (!argPattern.startsWith('^') && !argPattern.includes('\x00')) return undefined;
  if (exactArgvText(argPattern) !== undefined) return undefined;
  return linearRegexProblem(argPattern);
}

/**
 * The text an exact-argv binding (`exactArgPattern`) stands for, or undefined when the pattern
 * is not one: compared as a string, it binds an argv of any length, past any regex budget.
 */
export function exactArgvText(pattern: string): string | undefined {
  if (!pattern.startsWith('^') || !pattern.endsWith('\x00$')) return undefined;
  let out = '';
  for (let i = 1; i < pattern.length - 1; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined || !REGEX_SPECIALS.includes(next)) return undefined;
      out += next;
      i++;
    } else if (REGEX_SPECIALS.includes(c)) return undefined;
    else out += c;
  }
  return out;
}

const REGEX_SPECIALS = '.*+?^${}()|[]\\';
