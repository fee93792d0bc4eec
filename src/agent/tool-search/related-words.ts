import { WORDNET_RELATED } from './wordnet.js';

/**
 * General English word relations for tool_search (wordnet.ts, generated from WordNet): the words a
 * request's word may stand for in a tool's text (`bill` → `invoice`, `deploy` → `deployment`),
 * each with a weight in (0, 1] for how often the sense relating them is the one meant. Keys and
 * words are stemmed as text.ts stems. A word's line is read the first time it is asked for.
 */
export type Related = ReadonlyArray<readonly [term: string, weight: number]>;

const NONE: Related = [];
/** Word → where its line's related words lie in the table: built on first use, rows parsed as asked. */
let lines: Map<string, number> | undefined;
const rows = new Map<string, Related>();

function index(): Map<string, number> {
  const out = new Map<string, number>();
  let at = 0;
  while (at < WORDNET_RELATED.length) {
    const space = WORDNET_RELATED.indexOf(' ', at);
    out.set(WORDNET_RELATED.slice(at, space), space + 1);
    const end = WORDNET_RELATED.indexOf('\n', space);
    at = end < 0 ? WORDNET_RELATED.length : end + 1;
  }
  return out;
}

function parse(from: number): Related {
  const end = WORDNET_RELATED.indexOf('\n', from);
  const row: Array<readonly [string, number]> = [];
  for (const p of WORDNET_RELATED.slice(from, end < 0 ? undefined : end).split(' ')) row.push([p.slice(0, -1), (p.charCodeAt(p.length - 1) - 48) / 10]);
  return row;
}

/** The words a stemmed term relates to, heaviest first; none for a word the table lacks. */
export function relatedWords(term: string): Related {
  const hit = rows.get(term);
  if (hit) return hit;
  lines ??= index();
  const from = lines.get(term);
  if (from === undefined) return NONE;
  const row = parse(from);
  rows.set(term, row);
  return row;
}
