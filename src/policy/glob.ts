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

/** A predicate for one validated glob; names are expected normalised (lower-case). */
export function compileGlob(pattern: string): (name: string) => boolean {
  const re = picomatch.makeRe(pattern, { strictBrackets: true, dot: true });
  return (name) => re.test(name);
}
