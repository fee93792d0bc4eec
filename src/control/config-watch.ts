import { watch, type FSWatcher } from 'chokidar';
import path from 'node:path';
import { log } from '../log/log.js';

/**
 * Watches the config file and calls `onChange` once per burst of writes, after `debounceMs` of
 * quiet. The folder is watched (filtered to the file) so editors that save by writing a new
 * file and renaming it over the old one are seen too.
 */
export class ConfigFileWatcher {
  private readonly watcher: FSWatcher;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly readyPromise: Promise<void>;

  constructor(
    private readonly file: string,
    private readonly onChange: () => void,
    private readonly debounceMs = 300,
  ) {
    const target = path.resolve(file);
    this.watcher = watch(path.dirname(target), { ignoreInitial: true, depth: 0, ignored: (p) => p !== target && p !== path.dirname(target) });
    this.readyPromise = new Promise((resolve) => this.watcher.once('ready', () => resolve()));
    this.watcher.on('all', (event, p) => {
      if (path.resolve(p) !== target || (event !== 'add' && event !== 'change')) return;
      this.schedule();
    });
    this.watcher.on('error', (err) => log.warn({ err, file }, 'config watcher error'));
  }

  ready(): Promise<void> {
    return this.readyPromise;
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.closed) this.onChange();
    }, this.debounceMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.watcher.close();
  }
}
