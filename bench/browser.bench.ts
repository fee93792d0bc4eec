// The browser over the web-page corpus: what a role snapshot costs the model against the raw
// HTML (tokens ≈ chars/4), how many visible interactive elements a ref reaches, how long a
// snapshot takes, and how long a profile's Chromium (with its guard proxy) takes to launch.
// Pages are loaded with setContent and every request is aborted: nothing leaves the machine.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { snapshotPage } from '../src/browser/page-snapshot.js';
import { BrowserSession } from '../src/browser/session.js';
import type { Resolver } from '../src/net/index.js';
import { interactiveCoverage } from '../test/browser/coverage.js';
import { type Bench, fmtMs, fmtRatio, measure, summarize } from './harness.js';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test/fixtures/web-pages');
const noDns: Resolver = async () => {
  throw Object.assign(new Error('offline benchmark'), { code: 'ENOTFOUND' });
};
const tokens = (chars: number) => Math.round(chars / 4);

const bench: Bench = async (report) => {
  const dir = process.env.WARDEN_WEB_CORPUS && existsSync(process.env.WARDEN_WEB_CORPUS) ? process.env.WARDEN_WEB_CORPUS : fixtures;
  // The whole corpus takes minutes in Chromium: by default the three pages the tests use.
  const pages = dir === fixtures ? ['001', 'lwn-1', 'mozilla-1'] : readdirSync(dir).filter((d) => existsSync(path.join(dir, d, 'source.html')));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'warden-bench-browser-'));

  const launches: number[] = [];
  let session: BrowserSession | undefined;
  for (let i = 0; i < 3; i++) {
    await session?.close();
    const spec = { name: `bench${i}`, headless: true, userDataDir: path.join(dataDir, `p${i}`) };
    const began = performance.now();
    session = await BrowserSession.start(spec, { policy: {}, resolve: noDns });
    const page = await session.currentOrNewTab();
    await page.setContent('<p>ready</p>');
    launches.push(performance.now() - began);
  }
  const page = await session!.currentOrNewTab();
  await page.route('**/*', (route) => route.abort());

  let raw = 0;
  const chars = { full: 0, compact: 0, interactive: 0 };
  let elements = 0;
  let reachable = 0;
  const times: number[] = [];
  for (const name of pages) {
    const html = readFileSync(path.join(dir, name, 'source.html'), 'utf8');
    await page.setContent(html, { waitUntil: 'domcontentloaded', timeout: 30_000 }).catch(() => undefined);
    raw += html.length;
    const full = await snapshotPage(page, {});
    chars.full += full.snapshot.length;
    chars.compact += (await snapshotPage(page, { compact: true })).snapshot.length;
    chars.interactive += (await snapshotPage(page, { interactive: true })).snapshot.length;
    const coverage = await interactiveCoverage(page, full.refs);
    elements += coverage.elements;
    reachable += coverage.reachable;
    times.push((await measure(() => snapshotPage(page, {}), { iterations: 5, warmup: 1 })).median);
  }
  await session!.close();
  rmSync(dataDir, { recursive: true, force: true });

  const launch = summarize(launches);
  const snapshot = summarize(times);
  report({ name: `pages (${dir === fixtures ? 'three fixtures; set WARDEN_WEB_CORPUS=test/fixtures/web-pages for all' : 'corpus'})`, value: String(pages.length) });
  report({ name: 'raw HTML tokens (chars/4)', value: String(tokens(raw)) });
  for (const [mode, n] of Object.entries(chars)) report({ name: `snapshot tokens, ${mode}`, value: String(tokens(n)), note: `${fmtRatio(n / raw)} of raw HTML` });
  report({ name: 'visible interactive elements reachable by a ref', value: `${((reachable / Math.max(1, elements)) * 100).toFixed(1)} %`, note: `${reachable} of ${elements}` });
  report({ name: 'snapshot time per page (median of page medians)', value: fmtMs(snapshot.median), note: `slowest page ${fmtMs(Math.max(...times))}` });
  report({ name: 'Chromium launch with guard proxy (median of 3)', value: fmtMs(launch.median), note: `first ${fmtMs(launches[0]!)}` });
};
export default bench;
