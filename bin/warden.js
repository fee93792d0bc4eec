#!/usr/bin/env node
// Runs the JavaScript build in dist/ (made by `npm ci` through `prepare`, or `npm run build`).
// Without a finished build, or with WARDEN_FROM_SOURCE=1, it runs the TypeScript sources through
// tsx instead: slower to start, same behaviour.
import { existsSync } from 'node:fs';
import module from 'node:module';

const built = !process.env.WARDEN_FROM_SOURCE && existsSync(new URL('../dist/BUILD', import.meta.url));
let main;
if (built) {
  // Node 22.1 and later keep V8's code cache of the modules they compile (in the temporary folder,
  // or NODE_COMPILE_CACHE's; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so a command does not
  // compile the same chunks from their text at every run. Node 20 has no such cache; there,
  // `warden tools` runs from a code cache of its own (src/util/cached-script.ts).
  module.enableCompileCache?.();
  ({ main } = await import('../dist/cli.js'));
}
else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli.ts'));
}
process.exitCode = await main(process.argv.slice(2));
