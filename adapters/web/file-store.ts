import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A file the web chat serves: a reply's file, or one the person uploaded. */
export interface StoredFile {
  name: string;
  mimeType: string;
  data: Buffer;
}

interface Entry {
  name: string;
  mimeType: string;
  bytes: number;
  at: number;
  /** Who put it there: a reply (`out`) or the page (`upload`: only these may be named as a message's files). */
  kind: 'out' | 'upload';
}

export interface WebFileStore {
  put(file: StoredFile, kind: Entry['kind']): string;
  get(id: string): (StoredFile & { kind: Entry['kind'] }) | undefined;
}

/** The ids the store hands out: 24 hex digits, unguessable, and nothing a path could be made of. */
export const FILE_ID = /^[0-9a-f]{24}$/;

/**
 * The web chat's files, by an unguessable id. With `dir` (under the data dir) they are kept on
 * disk, so a link in the history still works after a restart; without, in memory. Either way
 * the oldest go first once there are more than `maxFiles` or more than `maxBytes` together.
 * Each file is two entries, `<id>.bin` and `<id>.json`, written to a temporary name and renamed.
 */
export function webFileStore(options: { dir?: string | undefined; maxFiles: number; maxBytes: number }): WebFileStore {
  const index = new Map<string, Entry>();
  const memory = new Map<string, Buffer>();
  const dir = options.dir;
  let last = 0;
  if (dir) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const found: Array<[string, Entry]> = [];
    for (const name of readdirSync(dir)) {
      const id = name.slice(0, -'.json'.length);
      if (!name.endsWith('.json') || !FILE_ID.test(id)) continue;
      try {
        const entry = JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as Entry;
        if (typeof entry.name === 'string' && typeof entry.mimeType === 'string' && typeof entry.bytes === 'number' && typeof entry.at === 'number') found.push([id, entry]);
      } catch {
        // A half-written entry from a crash: not served.
      }
    }
    for (const [id, entry] of found.sort((a, b) => a[1].at - b[1].at)) {
      index.set(id, entry);
      last = Math.max(last, entry.at);
    }
    prune();
  }

  function remove(id: string): void {
    index.delete(id);
    memory.delete(id);
    if (dir) for (const ext of ['.json', '.bin']) rmSync(path.join(dir, id + ext), { force: true });
  }

  function prune(): void {
    let total = [...index.values()].reduce((n, e) => n + e.bytes, 0);
    for (const [id, entry] of index) {
      if (index.size <= options.maxFiles && total <= options.maxBytes) break;
      total -= entry.bytes;
      remove(id);
    }
  }

  const write = (file: string, data: string | Buffer) => {
    const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, data, { mode: 0o600 });
    renameSync(tmp, file);
  };

  return {
    put(file, kind) {
      const id = randomBytes(12).toString('hex');
      // Strictly increasing, so the order of age is the order of arrival, restarts included.
      last = Math.max(Date.now(), last + 1);
      const entry: Entry = { name: file.name, mimeType: file.mimeType, bytes: file.data.length, at: last, kind };
      if (dir) {
        write(path.join(dir, `${id}.bin`), file.data);
        write(path.join(dir, `${id}.json`), JSON.stringify(entry));
      } else {
        memory.set(id, file.data);
      }
      index.set(id, entry);
      prune();
      return id;
    },
    get(id) {
      if (!FILE_ID.test(id)) return undefined;
      const entry = index.get(id);
      if (!entry) return undefined;
      let data: Buffer | undefined;
      try {
        data = dir ? readFileSync(path.join(dir, `${id}.bin`)) : memory.get(id);
      } catch {
        data = undefined;
      }
      return data ? { name: entry.name, mimeType: entry.mimeType, data, kind: entry.kind ?? 'out' } : undefined;
    },
  };
}
