#!/usr/bin/env node
// Runs the TypeScript sources directly (no build step), so `npx warden` works right after `npm ci`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
