/**
 * Serialises mutations per canonical path (reference C5: concurrent writes to one file queue up
 * instead of interleaving). Locks for several paths are taken in sorted order so two patches
 * touching the same files cannot deadlock.
 */
const tails = new Map<string, Promise<void>>();

async function lockOne(key: string): Promise<() => void> {
  const previous = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const current = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => current);
  tails.set(key, tail);
  await previous;
  return () => {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  };
}

/** Runs `fn` while holding the locks of every path in `keys`. */
export async function withPathLocks<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
  const releases: Array<() => void> = [];
  try {
    for (const key of [...new Set(keys)].sort()) releases.push(await lockOne(key));
    return await fn();
  } finally {
    for (const release of releases.reverse()) release();
  }
}
