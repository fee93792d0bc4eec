import type { BoundFile } from './file-binding.js';

// Apart from content-binding.ts (which reads commands' script files, with the analysis it needs)
// so that the grant store, loaded at every start, compares bindings without loading that.

/**
 * Why the files now differ from the ones approved; null when they are the same. The first
 * difference is named the way the approval card shows it.
 */
export function bindingChange(approved: readonly BoundFile[], now: readonly BoundFile[]): string | null {
  const paths = (list: readonly BoundFile[]) => list.map((f) => f.path).join('\0');
  if (paths(approved) !== paths(now)) {
    const was = approved.map((f) => f.path).join(', ') || 'no script file';
    return `the grant was approved for ${was}, this command runs ${now.map((f) => f.path).join(', ') || 'no script file'}`;
  }
  for (let i = 0; i < approved.length; i++) {
    const a = approved[i]!;
    const b = now[i]!;
    if (a.realPath !== null && b.realPath === null) return `${CHANGED}: ${a.path} no longer exists`;
    if (a.realPath === null && b.realPath !== null) return `${CHANGED}: ${a.path} did not exist then`;
    if (a.realPath !== b.realPath) return `${CHANGED}: ${a.path} now leads to ${b.realPath}, not ${a.realPath}`;
    if (a.sha256 !== b.sha256) return `${CHANGED}: ${a.path} (sha256 ${short(a.sha256)} → ${short(b.sha256)})`;
  }
  return null;
}

/** How the card and the reason say it (first, so a truncated card still says it). */
export const CHANGED = 'changed since it was approved';

const short = (hash: string | null): string => (hash === null ? 'none' : `${hash.slice(0, 12)}…`);
