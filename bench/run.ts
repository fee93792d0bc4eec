// Runs every `bench/*.bench.ts` (or those named on the command line) and prints their rows.
import './run-dir.js';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Bench, BenchRow } from './harness.js';

const dir = path.dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const out = (line: string) => process.stdout.write(`${line}\n`);
out(`warden bench — node ${process.version}, ${process.platform}/${process.arch}`);
for (const file of files) {
  const mod = (await import(pathToFileURL(path.join(dir, file)).href)) as { default: Bench };
  out(`\n## ${file.replace(/\.bench\.ts$/, '')}`);
  const report = (row: BenchRow) => out(`  ${row.name.padEnd(58)} ${row.value.padStart(14)}${row.note ? `  ${row.note}` : ''}`);
  await mod.default(report);
}
