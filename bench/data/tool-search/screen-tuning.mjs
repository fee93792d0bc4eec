// Drops from an additional tuning file every request that is a near copy of a held-out
// request, so that tuning on it cannot carry a held-out request's wording into the ranker.
// The rule is the one the held-out sets were screened with (README): same expected tool and a
// Jaccard similarity of 0.5 or more between the sets of lower-case [a-z0-9]+ words. It prints
// only counts: the held-out requests are compared here and never shown.
//   node bench/data/tool-search/screen-tuning.mjs tune-2.jsonl
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const file = process.argv[2];
if (!file || /heldout/.test(file)) {
  process.stderr.write('usage: screen-tuning.mjs <tuning file in this folder>\n');
  process.exit(2);
}
const read = (name) =>
  readFileSync(join(here, name), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
const words = (text) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);
const jaccard = (a, b) => {
  let shared = 0;
  for (const w of a) if (b.has(w)) shared += 1;
  return shared / (a.size + b.size - shared);
};

const heldOut = [...read('heldout.jsonl'), ...read('heldout-3.jsonl')].map((r) => ({ words: words(r.request), expected: new Set(r.expected) }));
const tuning = read(file);
const kept = tuning.filter((r) => {
  const w = words(r.request);
  return !heldOut.some((h) => r.expected.some((t) => h.expected.has(t)) && jaccard(w, h.words) >= 0.5);
});
writeFileSync(join(here, file), kept.map((r) => JSON.stringify(r)).join('\n') + '\n');
process.stdout.write(`${file}: ${tuning.length} requests, ${tuning.length - kept.length} dropped as near copies of held-out requests, ${kept.length} kept\n`);
