// The secret scrubber on tool output: every tool result passes it before the model reads it.
// 100 KB of text (a real web page's HTML, a log of random hex and base64 lines) with 20 known
// secrets registered; target: at most 1 ms per 100 KB.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { registerKnownSecrets, scrubSecrets } from '../src/redact/scrub.js';
import { type Bench, fmtMs, measure } from './harness.js';

const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test/fixtures/web-pages');

const bench: Bench = async (report) => {
  const off = registerKnownSecrets(
    'bench',
    Array.from({ length: 20 }, (_, i) => ({ name: `SECRET_${i}`, value: randomBytes(24).toString('base64url') })),
  );
  const page = readdirSync(corpus)
    .map((d) => path.join(corpus, d, 'source.html'))
    .filter((f) => existsSync(f))
    .map((f) => readFileSync(f, 'utf8'))
    .find((t) => t.length >= 100_000)!
    .slice(0, 100_000);
  const log = Array.from({ length: 2000 }, (_, i) => `${i} ${randomBytes(12).toString('hex')} ${randomBytes(18).toString('base64')}`).join('\n').slice(0, 100_000);
  for (const [name, text] of [['HTML page', page], ['hex/base64 log', log]] as const) {
    const known = await measure(() => scrubSecrets(text, { detect: false }), { iterations: 200, warmup: 50 });
    const all = await measure(() => scrubSecrets(text), { iterations: 200, warmup: 50 });
    report({ name: `known secrets, 100 KB ${name} (median)`, value: fmtMs(known.median), note: `p99 ${fmtMs(known.p99)}` });
    report({ name: `known + detected, 100 KB ${name} (median)`, value: fmtMs(all.median), note: `p99 ${fmtMs(all.p99)}; target ≤ 1 ms` });
  }
  off();
};
export default bench;
