import { createRequire } from 'node:module';

// The YAML parser, loaded at its first use and synchronously (the config loader is synchronous).
// From the sources it is the `yaml` package: some seventy CommonJS files, each resolved, read and
// compiled on its own. The build (scripts/build.mjs) bundles it into one file beside the chunks
// and names that file here, so a built `warden` reads one file instead; both are the same
// package at the same version. One copy for every caller: the config loader, the config editor
// and the skill front matter share it.
declare const WARDEN_YAML_BUNDLE: string | undefined;

const require = createRequire(import.meta.url);
let loaded: typeof import('yaml') | undefined;

export function yaml(): typeof import('yaml') {
  loaded ??= require(typeof WARDEN_YAML_BUNDLE === 'string' ? WARDEN_YAML_BUNDLE : 'yaml') as typeof import('yaml');
  return loaded;
}
