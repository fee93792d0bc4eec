import { createRequire } from 'node:module';

// The JSON5 parser, loaded at its first use and synchronously (the config loader is synchronous):
// a start whose config is YAML and whose skills and plugins have no JSON5 to read never holds it.
// From node_modules in both the sources and the build (a few CommonJS files, read once).
const load = createRequire(import.meta.url);
let loaded: typeof import('json5') | undefined;

export function json5(): typeof import('json5') {
  loaded ??= load('json5') as typeof import('json5');
  return loaded;
}
