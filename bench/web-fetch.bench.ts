// web_fetch extraction over the web-page corpus: what the model reads costs how much less than
// the raw HTML, how much of the reference article text survives, and how long extraction takes.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractHtml } from '../src/tools/core/web/extract.js';
import { type Bench, fmtMs, fmtRatio, measure } from './harness.js';

// The 130-page corpus kept with the benchmarks; WARDEN_WEB_CORPUS points at another one.
const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test/fixtures/web-pages');

const words = (text: string) => text.split(/[^A-Za-z]+/).filter((w) => w.length >= 5);

const bench: Bench = async (report) => {
  const dir = process.env.WARDEN_WEB_CORPUS && existsSync(process.env.WARDEN_WEB_CORPUS) ? process.env.WARDEN_WEB_CORPUS : corpus;
  const pages = readdirSync(dir).filter((d) => existsSync(path.join(dir, d, 'source.html')));
  let rawChars = 0;
  let outChars = 0;
  let retainedSum = 0;
  let scored = 0;
  const times: number[] = [];
  for (const page of pages) {
    const html = readFileSync(path.join(dir, page, 'source.html'), 'utf8');
    const timing = await measure(() => extractHtml(html, `https://example.com/${page}/`, 'markdown'), { iterations: 3, warmup: 1 });
    times.push(timing.median);
    const out = extractHtml(html, `https://example.com/${page}/`, 'markdown').content;
    rawChars += html.length;
    outChars += out.length;
    const expectedFile = path.join(dir, page, 'expected.html');
    if (existsSync(expectedFile)) {
      const expected = words(readFileSync(expectedFile, 'utf8').replace(/<[^>]+>/g, ' '));
      if (expected.length > 0) {
        const have = new Set(words(out));
        retainedSum += expected.filter((w) => have.has(w)).length / expected.length;
        scored++;
      }
    }
  }
  times.sort((a, b) => a - b);
  report({ name: `pages (${dir === corpus ? 'test/fixtures/web-pages' : 'WARDEN_WEB_CORPUS'})`, value: String(pages.length) });
  report({ name: 'tokens read by the model vs raw HTML (chars/4)', value: `${Math.round(outChars / 4)}`, note: `raw ${Math.round(rawChars / 4)}, ${fmtRatio(outChars / rawChars)} of raw` });
  report({ name: 'reference article words retained (mean)', value: `${((retainedSum / Math.max(1, scored)) * 100).toFixed(1)} %` });
  report({ name: 'extraction time per page (median)', value: fmtMs(times[Math.floor(times.length / 2)] ?? 0) });
};
export default bench;
