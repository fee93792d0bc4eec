import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadCachedScript, ownCacheFolder } from './cached-script.js';

/**
 * Loads the script in a process of its own, as each `warden tools` does (within one process V8
 * finds a script it compiled before in memory, whatever the cache says), and saves the cache.
 */
function loadElsewhere(file: string, cache: string): { fromCache: boolean; answer: number } {
  const code = `import { loadCachedScript } from ${JSON.stringify(pathToFileURL(path.join(import.meta.dirname, 'cached-script.ts')).href)};
const loaded = loadCachedScript(${JSON.stringify(file)}, ${JSON.stringify(cache)});
process.stdout.write(JSON.stringify({ fromCache: loaded.fromCache, answer: loaded.exports.answer(21) }));
loaded.saveCache();`;
  return JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' })) as { fromCache: boolean; answer: number };
}

// A script as the build writes it: CommonJS in a function of the loader's parameters.
const script = (body: string) => `(function (exports, require, module, __filename, __dirname, __wardenImportMetaUrl, __wardenImport) {${body}\n})`;
const ANSWER = script('module.exports.answer = (x) => x * 2; module.exports.url = __wardenImportMetaUrl; module.exports.load = (s) => __wardenImport(s); module.exports.sep = require("node:path").sep;');

let dir: string;
let file: string;
let cache: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'warden-cached-script-'));
  file = path.join(dir, 'answer.cjs');
  cache = path.join(dir, 'cache');
  writeFileSync(file, ANSWER);
});
afterEach(() => {
  chmodSync(dir, 0o755);
  rmSync(dir, { recursive: true, force: true });
});

type Answer = { answer: (x: number) => number; url: string; load: (s: string) => Promise<{ sep: string }>; sep: string };

describe('loadCachedScript', () => {
  it('runs the script with a require, its URL and an import(), and saves its cache once asked', async () => {
    const first = loadCachedScript<Answer>(pathToFileURL(file), pathToFileURL(`${cache}/`));
    expect(first.fromCache).toBe(false);
    expect(first.exports.answer(21)).toBe(42);
    expect(first.exports.url).toBe(pathToFileURL(file).href);
    expect(first.exports.sep).toBe('/');
    expect((await first.exports.load('node:path')).sep).toBe('/');
    expect(readdirSync(cache)).toEqual([]);
    first.saveCache();
    expect(readdirSync(cache)).toEqual([expect.stringMatching(/^answer\.cjs\.[0-9a-f]{32}\.v\d+\.\d+\.\d+-\w+\.v8$/)]);
  });

  it('takes the cache a previous run saved; never runs a changed script with the old bytecode, even at the same length', () => {
    expect(loadElsewhere(file, cache)).toEqual({ fromCache: false, answer: 42 });
    expect(loadElsewhere(file, cache)).toEqual({ fromCache: true, answer: 42 });
    writeFileSync(file, ANSWER.replace('x * 2', 'x * 3'));
    expect(loadElsewhere(file, cache)).toEqual({ fromCache: false, answer: 63 });
    expect(loadElsewhere(file, cache)).toEqual({ fromCache: true, answer: 63 });
  });

  it('compiles from the text when V8 refuses the cache (another version, other flags, a damaged file), and saves a good one', () => {
    expect(loadElsewhere(file, cache).fromCache).toBe(false);
    const [name] = readdirSync(cache);
    writeFileSync(path.join(cache, name!), 'not a code cache');
    expect(loadElsewhere(file, cache)).toEqual({ fromCache: false, answer: 42 });
    expect(loadElsewhere(file, cache)).toEqual({ fromCache: true, answer: 42 });
  });

  it('keeps no cache in a folder others can write, and takes no entry others can write (a forged entry would run)', () => {
    mkdirSync(cache);
    chmodSync(cache, 0o777);
    expect(loadElsewhere(file, cache)).toEqual({ fromCache: false, answer: 42 });
    expect(readdirSync(cache)).toEqual([]);
    chmodSync(cache, 0o700);
    expect(loadElsewhere(file, cache).fromCache).toBe(false);
    const [name] = readdirSync(cache);
    expect(statSync(path.join(cache, name!)).mode & 0o077).toBe(0);
    chmodSync(path.join(cache, name!), 0o666);
    expect(loadElsewhere(file, cache)).toEqual({ fromCache: false, answer: 42 });
    chmodSync(path.join(cache, name!), 0o600);
    expect(loadElsewhere(file, cache)).toEqual({ fromCache: true, answer: 42 });
  });

  it('makes its cache folder for the user alone', () => {
    expect(ownCacheFolder(cache)).toBe(true);
    expect(statSync(cache).mode & 0o077).toBe(0);
  });

  it.skipIf(process.getuid?.() === 0)('runs without a cache where none can be written (a read-only install)', () => {
    mkdirSync(cache);
    chmodSync(cache, 0o555);
    const loaded = loadCachedScript<Answer>(file, cache);
    expect(() => loaded.saveCache()).not.toThrow();
    expect(readdirSync(cache)).toEqual([]);
    expect(loadCachedScript<Answer>(file, cache).exports.answer(5)).toBe(10);
  });

  it('runs without a cache where the cache folder cannot be made (a file in its place)', () => {
    writeFileSync(cache, '');
    const loaded = loadCachedScript<Answer>(file, path.join(cache, 'below'));
    expect(() => loaded.saveCache()).not.toThrow();
    expect(loadCachedScript<Answer>(file, path.join(cache, 'below')).fromCache).toBe(false);
  });
});
