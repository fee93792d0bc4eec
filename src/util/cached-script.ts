import { createHash } from 'node:crypto';
import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, type Stats, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';

// A script the build wrote (scripts/build.mjs: CommonJS wrapped in a function), compiled from
// V8's code cache when there is one: the bytecode of the functions the previous run compiled,
// so this run neither parses nor compiles them. Node 20 has no such cache for ES modules
// (`module.enableCompileCache` is Node 22.1's). The cache is named after a hash of the script's
// bytes, so a changed script never runs with another's bytecode (V8 itself checks only the
// length of the source), and after the Node version and architecture; V8 refuses a cache of
// another version or other flags, and the script is then compiled from its text as without one.
// A cache that cannot be read or written (a read-only install) costs nothing but the compile.
// V8's own checks of an entry are ones a forger can satisfy, so the cache is read and written
// only in a folder of the user's that no one else can write, and an entry only when it is the
// user's and no one else's to write (fails closed: no cache).

/** Made or written by the user running this, and writable by no one else (root excepted). */
const ownedAlone = (stats: Stats): boolean => (stats.mode & 0o022) === 0 && (process.getuid === undefined || stats.uid === process.getuid());

/** `dir` (made if missing, for the user alone): whether a code cache may be kept there. */
export function ownCacheFolder(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stats = lstatSync(dir);
    return stats.isDirectory() && ownedAlone(stats);
  } catch {
    return false;
  }
}

/** The entry at `file` when it is the user's alone; undefined otherwise or when there is none. */
function readOwnEntry(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const stats = fstatSync(fd);
    return stats.isFile() && ownedAlone(stats) ? readFileSync(fd) : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export interface CachedScript<T> {
  /** What the script put in `module.exports`. */
  exports: T;
  /** Whether V8 took the code cache (false: none, or refused). */
  fromCache: boolean;
  /** Writes the code cache of what has been compiled so far (call it once the work is done); never throws. */
  saveCache(): void;
}

/**
 * The script's import() of a package or a plugin's URL: an ES module's, resolved from this
 * module's folder, which in the build is the script's (dist/chunks/).
 */
const importModule = (specifier: string): Promise<unknown> => import(specifier);

/** Loads `file` (a script of the build), with its code cache in `cacheDir` when there is one there. */
export function loadCachedScript<T>(location: string | URL, cache: string | URL): CachedScript<T> {
  const file = location instanceof URL ? fileURLToPath(location) : location;
  const cacheDir = cache instanceof URL ? fileURLToPath(cache) : cache;
  const bytes = readFileSync(file);
  const key = createHash('sha256').update(bytes).digest('hex').slice(0, 32);
  const cacheFile = path.join(cacheDir, `${path.basename(file)}.${key}.${process.version}-${process.arch}.v8`);
  const usable = ownCacheFolder(cacheDir);
  const cachedData = usable ? readOwnEntry(cacheFile) : undefined;
  // The build writes the scripts in ASCII only (scripts/build.mjs).
  const script = new vm.Script(bytes.toString('latin1'), {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
    // The build turns the script's import() of packages and plugins into calls of `importModule`
    // (scripts/build.mjs); one it missed still loads, with Node 20's warning that this is experimental.
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const fromCache = cachedData !== undefined && !script.cachedDataRejected;
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  const module = { exports: {} as T };
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file), pathToFileURL(file).href, importModule);
  return {
    exports: module.exports,
    fromCache,
    saveCache: () => {
      if (!usable) return;
      const temporary = `${cacheFile}.${process.pid}`;
      try {
        writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
        // Whole or not at all: another run reading it meanwhile finds the old file or none.
        renameSync(temporary, cacheFile);
      } catch {
        try {
          rmSync(temporary, { force: true });
        } catch {
          // Nothing was written.
        }
      }
    },
  };
}
