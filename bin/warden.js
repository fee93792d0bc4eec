#!/usr/bin/env node
// Runs the JavaScript build in dist/ (made by `npm ci` through `prepare`, or `npm run build`).
// Without a finished build, or with WARDEN_FROM_SOURCE=1, it runs the TypeScript sources through
// tsx instead: slower to start, same behaviour.
// A command that answers and exits has a file of its own, dist/commands/NAME.js (see
// scripts/build.mjs): one file to load instead of the dozens of chunks dist/cli.js would import.
import { existsSync } from 'node:fs';

const built = !process.env.WARDEN_FROM_SOURCE && existsSync(new URL('../dist/BUILD', import.meta.url));
let main;
if (built) {
  const name = process.argv[2];
  const own = name !== undefined && /^[a-z][a-z-]*$/.test(name) ? new URL(`../dist/commands/${name}.js`, import.meta.url) : undefined;
  ({ main } = await import(own && existsSync(own) ? own.href : '../dist/cli.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli.ts'));
}
process.exitCode = await main(process.argv.slice(2));
