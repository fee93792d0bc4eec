import { WORDNET_RELATED } from './wordnet.js';

/**
 * General English word relations for tool_search (wordnet.ts, generated from WordNet): the words a
 * request's word may stand for in a tool's text (`bill` → `invoice`, `deploy` → `deployment`),
 * each with a weight in (0, 1] for how often the sense relating them is the one meant. Keys and
 * words are stemmed as text.ts stems. Parsed on first use, once per process.
 */
export type Related = ReadonlyArray<readonly [term: string, weight: number]>;

let table: Map<string, Related> | undefined;
const NONE: Related = [];

function parse(): Map<string, Related> {
  const out = new Map<string, Related>();
  for (const line of WORDNET_RELATED.split('\n')) {
    const parts = line.split(' ');
    const row: Array<readonly [string, number]> = [];
    for (let k = 1; k < parts.length; k++) {
      const p = parts[k]!;
      row.push([p.slice(0, -1), (p.charCodeAt(p.length - 1) - 48) / 10]);
    }
    out.set(parts[0]!, row);
  }
  return out;
}

/** The words a stemmed term relates to, heaviest first; none for a word the table lacks. */
export function relatedWords(term: string): Related {
  table ??= parse();
  return table.get(term) ?? NONE;
}
