// Checks the labelled tool-search requests against the catalog. Run by hand after
// editing either file:  node bench/data/tool-search/validate.mjs
// Exits non-zero (naming file, line and key) when a line is malformed, an id repeats,
// a request appears in both halves, or an expected tool is not in catalog.json.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const catalog = JSON.parse(readFileSync(join(here, 'catalog.json'), 'utf8'));
const tools = new Set(catalog.tools.map((t) => t.name));
const errors = [];
const ids = new Set();
const requests = new Map();
const stats = {};

for (const file of ['tune.jsonl', 'tune-2.jsonl', 'tune-3.jsonl', 'tune-4.jsonl', 'tune-5.jsonl', 'heldout.jsonl', 'heldout-3.jsonl']) {
  const lines = readFileSync(join(here, file), 'utf8').split('\n').filter((l) => l.trim() !== '');
  const covered = new Set();
  const servers = new Set();
  lines.forEach((line, i) => {
    const at = `${file}:${i + 1}`;
    let r;
    try {
      r = JSON.parse(line);
    } catch {
      errors.push(`${at}: not JSON`);
      return;
    }
    if (typeof r.id !== 'string' || r.id === '') errors.push(`${at}: id must be a non-empty string`);
    else if (ids.has(r.id)) errors.push(`${at}: id ${r.id} repeats`);
    else ids.add(r.id);
    if (typeof r.request !== 'string' || r.request.trim() === '') errors.push(`${at}: request must be a non-empty string`);
    else {
      const key = r.request.trim().toLowerCase();
      if (requests.has(key)) errors.push(`${at}: request also at ${requests.get(key)}`);
      requests.set(key, at);
    }
    if (!Array.isArray(r.expected) || r.expected.length < 1 || r.expected.length > 3) errors.push(`${at}: expected must list 1 to 3 tool names`);
    else
      for (const name of r.expected) {
        if (!tools.has(name)) errors.push(`${at}: expected tool ${JSON.stringify(name)} is not in catalog.json`);
        covered.add(name);
        servers.add(String(name).split('__')[0]);
      }
  });
  stats[file] = { requests: lines.length, distinctTools: covered.size, servers: servers.size };
}

if (errors.length > 0) {
  for (const e of errors) process.stderr.write(e + '\n');
  process.exit(1);
}
process.stdout.write(JSON.stringify({ catalogTools: tools.size, ...stats }) + '\n');
