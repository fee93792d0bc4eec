import { parseHTML } from 'linkedom';
import { hits } from './clean.js';
import { joinUrl, providerRequest, statusError } from './http.js';
import type { ProviderCall, ProviderOutcome } from './types.js';

/**
 * DuckDuckGo's non-JavaScript HTML results page (no API exists; no key needed). Result links
 * point at DuckDuckGo's redirector, `//duckduckgo.com/l/?uddg=<target>`; the target is read
 * from it so the model never follows the redirector. Ads are skipped.
 */
export async function duckduckgo(c: ProviderCall): Promise<ProviderOutcome> {
  const url = new URL(joinUrl(c.provider.baseUrl, '/html/'));
  url.searchParams.set('q', c.query);
  const got = await providerRequest(c.provider, url.href, { headers: { accept: 'text/html' }, timeoutMs: c.timeoutMs, signal: c.signal, maxResponseBytes: 2_000_000 }, c.net);
  if (!got.ok) return got;
  if (got.status === 202 || got.status === 403 || got.status === 429) return { ok: false, error: `DuckDuckGo is refusing automated searches right now (HTTP ${got.status}); try again later or use another provider` };
  if (got.status < 200 || got.status >= 300) return { ok: false, error: statusError(c.provider, got.status) };
  const found = parseResults(got.text, c.count);
  if (found.length === 0 && /anomaly|challenge-form|are you a robot/i.test(got.text)) {
    return { ok: false, error: 'DuckDuckGo answered with a bot challenge instead of results; try again later or use another provider' };
  }
  return { ok: true, finding: { kind: 'results', results: found } };
}

export function parseResults(html: string, count: number) {
  const { document } = parseHTML(html);
  const items = Array.from(document.querySelectorAll('.result') as ArrayLike<Element>).filter((el) => !el.classList.contains('result--ad'));
  return hits<Element>(
    items,
    (el) => {
      const link = el.querySelector('a.result__a');
      return { title: link?.textContent ?? '', url: target(link?.getAttribute('href') ?? ''), snippet: el.querySelector('.result__snippet')?.textContent ?? '' };
    },
    count,
  );
}

function target(href: string): string {
  try {
    const url = new URL(href, 'https://duckduckgo.com');
    const uddg = url.pathname === '/l/' ? url.searchParams.get('uddg') : null;
    return uddg ?? url.href;
  } catch {
    return '';
  }
}
