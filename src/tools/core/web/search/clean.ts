import type { SearchHit } from './types.js';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/**
 * `text` without its `<…>` tags, as `/<[^>]*>/g` drops them; found with indexOf, since that
 * pattern scans the provider's text to the end again from each `<` that is never closed.
 */
export function withoutTags(text: string): string {
  let out = '';
  let from = 0;
  for (let open = text.indexOf('<'); open >= 0; open = text.indexOf('<', from)) {
    const close = text.indexOf('>', open + 1);
    if (close < 0) break;
    out += text.slice(from, open);
    from = close + 1;
  }
  return out + text.slice(from);
}

/** Provider text as plain text: tags dropped, common entities decoded, whitespace folded. */
export function plain(text: unknown, max = 600): string {
  if (typeof text !== 'string') return '';
  const out = withoutTags(text)
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+\d*);/gi, (m, name: string) => {
      const lower = name.toLowerCase();
      if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16));
      if (lower.startsWith('#') && lower !== '#39') return String.fromCodePoint(Number(lower.slice(1)));
      return ENTITIES[lower] ?? m;
    })
    .replace(/\s+/g, ' ')
    .trim();
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}

/** Only http(s) URLs reach the model, canonicalised. */
export function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** A publication date only when it looks like one (ISO), never "3 days ago". */
export function isoDate(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim();
  if (/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(v)) return v;
  const parsed = Date.parse(v);
  // RFC 1123 dates (Tavily's news) become ISO; anything vaguer is dropped.
  return /\d{4}/.test(v) && /\d{1,2}:\d{2}/.test(v) && Number.isFinite(parsed) ? new Date(parsed).toISOString() : undefined;
}

/** Builds hits from raw items, dropping those without a usable URL. */
export function hits<T>(items: unknown, pick: (item: T) => { title?: unknown; url?: unknown; snippet?: unknown; published?: unknown }, count: number): SearchHit[] {
  if (!Array.isArray(items)) return [];
  const out: SearchHit[] = [];
  for (const item of items as T[]) {
    if (!item || typeof item !== 'object') continue;
    const raw = pick(item);
    const url = httpUrl(raw.url);
    if (!url) continue;
    const snippet = plain(raw.snippet);
    out.push({ title: plain(raw.title, 200) || url, url, ...(snippet ? { snippet } : {}), ...(isoDate(raw.published) ? { published: isoDate(raw.published) } : {}) });
    if (out.length >= count) break;
  }
  return out;
}
