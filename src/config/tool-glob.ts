import picomatch from 'picomatch';

/**
 * Tool-name globs (semantics §2): picomatch on normalised names. Config validation and the
 * matcher share this module so a pattern that passes validation always compiles.
 */

const GLOB_CHARS = /[*?[\]{}()!+@|]/;

export function isGlob(entry: string): boolean {
  return GLOB_CHARS.test(entry);
}

/** Why `entry` cannot be a tool-policy entry, or undefined when it can. */
export function toolEntryProblem(entry: string): string | undefined {
  const trimmed = entry.trim();
  if (trimmed === '') return 'tool entry must not be empty';
  if (/\s/.test(trimmed)) return `invalid tool entry ${JSON.stringify(entry)}: tool names contain no whitespace`;
  if (/[/\\]/.test(trimmed)) return `invalid tool entry ${JSON.stringify(entry)}: tool names contain no "/" or "\\"`;
  if (trimmed.startsWith('!')) return `invalid glob ${JSON.stringify(entry)}: negation is not supported in a tool list; put the tool in deny instead`;
  if (!isGlob(trimmed)) return undefined;
  try {
    picomatch.makeRe(trimmed, { strictBrackets: true });
    return undefined;
  } catch (err) {
    return `invalid glob ${JSON.stringify(entry)}: ${(err as Error).message}`;
  }
}

const compiled = new Map<string, (name: string) => boolean>();

/**
 * A predicate for one validated glob; names are expected normalised (lower-case). Compiled once
 * per pattern. A pattern of literal text and `*` only (`plug3_*`, `*_tool4*`, almost every
 * policy entry) is matched by string search — what picomatch's expression does for it, since a
 * tool name has no `/` — and everything else by picomatch's expression.
 */
export function compileGlob(pattern: string): (name: string) => boolean {
  let test = compiled.get(pattern);
  if (!test) {
    test = STAR_ONLY.test(pattern) ? starMatcher(pattern, picomatch.makeRe(pattern, { strictBrackets: true, dot: true })) : regexMatcher(pattern);
    if (compiled.size > 4096) compiled.clear();
    compiled.set(pattern, test);
  }
  return test;
}

/** Literal characters (none of the glob syntax) and `*`. */
const STAR_ONLY = /^[^?[\]{}()!+@|\\]*$/;

function regexMatcher(pattern: string): (name: string) => boolean {
  const re = picomatch.makeRe(pattern, { strictBrackets: true, dot: true });
  return (name) => re.test(name);
}

/** `a*b*c`: starts with `a`, ends with `c`, `b` in between; an empty name or one with `/` goes to the expression. */
function starMatcher(pattern: string, re: RegExp): (name: string) => boolean {
  const chunks = pattern.split('*');
  const first = chunks[0]!;
  if (chunks.length === 1) return (name) => (name === '' || name.includes('/') ? re.test(name) : name === first);
  const last = chunks[chunks.length - 1]!;
  const middle = chunks.slice(1, -1).filter((c) => c !== '');
  return (name) => {
    if (name === '' || name.includes('/')) return re.test(name);
    if (!name.startsWith(first)) return false;
    const end = name.length - last.length;
    if (end < first.length || !name.endsWith(last)) return false;
    let at = first.length;
    for (const chunk of middle) {
      const found = name.indexOf(chunk, at);
      if (found === -1 || found + chunk.length > end) return false;
      at = found + chunk.length;
    }
    return true;
  };
}
