import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import { log } from '../log/log.js';

export const WATCH_DEBOUNCE_MS = 250;

/**
 * Watches skill roots and calls `onChange` once per burst of relevant changes (a SKILL.md
 * added, changed or removed, a skill folder added or removed), after `debounceMs` of quiet.
 *
 * chokidar does not notice a watched path that does not exist yet, and most roots start out
 * missing (`<workspace>/skills`, `~/.agents/skills`). For those the nearest existing ancestor
 * is watched one level deep until the root appears; then the root itself is watched.
 */
export class SkillRootWatcher {
  private readonly roots = new Set<string>();
  /** Roots' own folders, three levels deep: root/group/skill/SKILL.md. */
  private readonly deep: FSWatcher;
  /** Nearest existing ancestors of missing roots, one level deep. */
  private readonly shallow: FSWatcher;
  private deepPaths = new Set<string>();
  private shallowPaths = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly readyPromise: Promise<void>;

  constructor(
    private readonly onChange: () => void,
    private readonly debounceMs = WATCH_DEBOUNCE_MS,
  ) {
    const ignored = (p: string) => {
      const base = path.basename(p);
      if (base === 'node_modules') return true;
      // Hidden folders hold no skills, except the ones on the way to a root (`.agents`).
      return base.startsWith('.') && !this.isRootOrAncestor(p);
    };
    this.deep = watch([], { ignoreInitial: true, depth: 3, ignored });
    this.shallow = watch([], { ignoreInitial: true, depth: 0, ignored });
    const ready = (w: FSWatcher) => new Promise<void>((resolve) => w.once('ready', () => resolve()));
    this.readyPromise = Promise.all([ready(this.deep), ready(this.shallow)]).then(() => undefined);
    this.deep.on('all', (event, p) => this.onDeepEvent(event, p));
    this.shallow.on('all', (event, p) => this.onShallowEvent(event, p));
    for (const w of [this.deep, this.shallow]) w.on('error', (err) => log.warn({ err }, 'skill watcher error'));
  }

  /** Resolves once the initial scan is done; changes made after it are reported. */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  /** Adds roots to watch (roots already watched are kept). */
  watchRoots(dirs: Iterable<string>): void {
    if (this.closed) return;
    let added = false;
    for (const dir of dirs) {
      const abs = path.resolve(dir);
      if (!this.roots.has(abs)) {
        this.roots.add(abs);
        added = true;
      }
    }
    if (added) this.replan();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([this.deep.close(), this.shallow.close()]);
  }

  private replan(): void {
    const deep = new Set<string>();
    const shallow = new Set<string>();
    for (const root of this.roots) {
      if (isDirectory(root)) deep.add(root);
      else {
        const ancestor = nearestExisting(root);
        if (ancestor) shallow.add(ancestor);
      }
    }
    sync(this.deep, this.deepPaths, deep);
    sync(this.shallow, this.shallowPaths, shallow);
    this.deepPaths = deep;
    this.shallowPaths = shallow;
  }

  private onDeepEvent(event: string, p: string): void {
    if (event === 'unlinkDir' && this.roots.has(p)) this.replan();
    if (event === 'addDir' || event === 'unlinkDir' || path.basename(p) === 'SKILL.md') this.schedule();
  }

  private onShallowEvent(event: string, p: string): void {
    // Something appeared or vanished on the way to a missing root: watch closer, and rescan.
    if ((event === 'addDir' || event === 'unlinkDir') && this.isRootOrAncestor(p)) {
      this.replan();
      this.schedule();
    }
  }

  private isRootOrAncestor(p: string): boolean {
    for (const root of this.roots) if (root === p || root.startsWith(p + path.sep)) return true;
    return false;
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.closed) return;
      // Folders created while a watch was being set up sent no event; look again.
      this.replan();
      this.onChange();
    }, this.debounceMs);
  }
}

function sync(watcher: FSWatcher, current: Set<string>, wanted: Set<string>): void {
  const add = [...wanted].filter((p) => !current.has(p));
  const remove = [...current].filter((p) => !wanted.has(p));
  if (remove.length > 0) watcher.unwatch(remove);
  if (add.length > 0) watcher.add(add);
}

function nearestExisting(dir: string): string | undefined {
  let current = path.dirname(dir);
  for (;;) {
    if (isDirectory(current)) return current;
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

function isDirectory(p: string): boolean {
  try {
    return existsSync(p) && statSync(p).isDirectory();
  } catch {
    return false;
  }
}
