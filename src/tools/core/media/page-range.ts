/** Pages a `pages` argument names: `"3"`, `"1-5"`, `"2,4,7-9"`, `"10-"`; 1-based, within `count`. */
export function parsePageRange(spec: string | undefined, count: number, max: number): { ok: true; pages: number[]; more: boolean } | { ok: false; error: string } {
  const pages = new Set<number>();
  const text = spec?.trim() || `1-${count}`;
  for (const part of text.split(',')) {
    // Trimmed first: `\s*(\d*)\s*$` would retry a long run of blanks at every split.
    const m = /^(\d+)\s*(?:-\s*(\d*))?$/.exec(part.trim());
    if (!m) return { ok: false, error: `pages "${spec}" is not a page range like "1-3,5" or "10-"` };
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : m[2] === '' ? count : Number(m[2]);
    if (from < 1 || to < from) return { ok: false, error: `pages "${part.trim()}" is not a valid range (pages start at 1)` };
    if (from > count) return { ok: false, error: `page ${from} does not exist: the document has ${count} page${count === 1 ? '' : 's'}` };
    for (let p = from; p <= Math.min(to, count); p++) pages.add(p);
  }
  const sorted = [...pages].sort((a, b) => a - b);
  return { ok: true, pages: sorted.slice(0, max), more: sorted.length > max };
}
