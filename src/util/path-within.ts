import { realpathSync } from 'node:fs';
import path from 'node:path';

/** `p` with its links resolved, or `p` itself where it does not exist (yet). */
export function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** `target` is `dir` or lies below it (both as given: resolve links first where that matters). */
export function isWithinOrEqual(target: string, dir: string): boolean {
  const rel = path.relative(dir, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}
