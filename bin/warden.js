#!/usr/bin/env node
// Runs the JavaScript build in dist/ (made by `npm ci` through `prepare`, or `npm run build`).
// Without a finished build, or with WARDEN_FROM_SOURCE=1, it runs the TypeScript sources through
// tsx instead: slower to start, same behaviour.
import { existsSync } from 'node:fs';

const built = !process.env.WARDEN_FROM_SOURCE && existsSync(new URL('../dist/BUILD', import.meta.url));
let main;
if (built) ({ main } = await import('../dist/cli.js'));
else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli.ts'));
}
process.exitCode = await main(process.argv.slice(2));
