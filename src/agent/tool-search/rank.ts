import { ACTION_CUES, RELATED, TOOL_VERBS, type Action } from './lexicon.js';
import { segment, stem, STOP, terms, words } from './text.js';
import type { Translations } from './learn.js';
import { TRANSLATIONS } from './translations.js';
import { FEATURES, score as linearScore, type RerankModel } from './rerank.js';
import { RERANK_MODEL } from './rerank-model.js';
import { relatedWords } from './related-words.js';

/**
 * Lexical ranking for tool_search. It ranks only the tools it is handed (the turn's surface)
 * and returns a subset of them; nothing else is in reach.
 *
 * - BM25F over a tool's fields: its name (split into words, glued lower-case names segmented),
 *   its server, the first sentence of its description, the whole description, and its
 *   parameters' names, descriptions and enum values, each with its own weight.
 * - The request's own words, plus the words tool lists use for the team speak in it
 *   (lexicon.ts: `PRs` → pull request, `copies` → replicas, `prod` → environment) at a lower
 *   weight.
 * - The words general English relates the request's words to (related-words.ts, generated from
 *   WordNet: `bill` → invoice, `deploy` → deployment), weighed by how often the sense relating
 *   them is meant, at a lower weight still; only words some tool on the surface uses.
 * - A server prior: the request scored against each server's tools taken together, so a
 *   request about deployments and replicas prefers the Kubernetes server's tools over a
 *   generic tool that shares one word with it.
 * - What the request wants done (list, get, search, create, update, delete) against what the
 *   tool's name says it does.
 * - A request word that begins a server's name (`mongo`) names that server.
 * - Learned translations (translations.ts, built from labelled requests by learn.ts): a tool whose
 *   name, server or first sentence holds the words the request's words stood for is lifted. A
 *   multiplier on tools already scored: it never adds a candidate.
 * - Optionally (the `feedback` knob, off by default: it did not help on the tuning half), a second
 *   pass with the terms the first pass's best tools share (Rocchio pseudo-relevance feedback).
 * - Last, a learning-to-rank stage (rerank.ts, weights in rerank-model.ts): the best `depth`
 *   candidates' MCP tools re-ordered, in the places they held, by a linear model of their
 *   features. A permutation of what the first stage found: it never adds a candidate.
 * An exact tool id always comes first. The index of a surface is built once and cached.
 */
export interface Searchable {
  id: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The knobs of the ranking; the defaults are what `npm run bench` measures. */
export interface RankOptions {
  k1: number;
  /** Field weights. */
  name: number;
  server: number;
  lead: number;
  description: number;
  params: number;
  /** Length normalisation of the long fields (the name and server are short: none). */
  b: number;
  /** Weight of a lexicon word against the request's own words (1). */
  related: number;
  /** The same when the request's word is used by no tool on the surface (jargon like `PRs`). */
  replaced: number;
  /** How much the best-matching server lifts its tools: score × (1 + serverPrior × s/max). */
  serverPrior: number;
  /** A tool doing what the request asks: score × (1 + actionBonus × match). */
  actionBonus: number;
  /** A tool doing something else (writing when asked to read, deleting when asked to edit). */
  actionPenalty: number;
  /** Warden's own tools (no server) against a request that names a server's words. */
  corePenalty: number;
  /** A tool of another server than the one(s) the request names. */
  otherServer: number;
  /**
   * Pseudo-relevance feedback (Rocchio): the weight of the terms the first pass's best tools
   * share, added to the request for a second pass (0: one pass only).
   */
  feedback: number;
  /** How many of the first pass's best tools feed the second. */
  feedbackDocs: number;
  /** How many of their terms are added. */
  feedbackTerms: number;
  /**
   * Weight of the learned translations (translations.ts): a tool whose name, server or first
   * sentence holds the words the request's words stood for in labelled requests scores
   * × (1 + learned × Σ over request words of ln(1 + Σ p(tool word | request word))) (0: off).
   */
  learned: number;
  /**
   * Weight of a word general English relates to a request's word (related-words.ts, from WordNet:
   * synonyms, derived forms, direct hypernyms and hyponyms), times the relation's own weight (0: off).
   */
  wordnet: number;
  /** The same when the request's word is used by no tool on the surface. */
  wordnetReplaced: number;
  /** The translation table (the shipped one unless a tuning run passes its own). */
  translations?: Translations;
  /**
   * The learning-to-rank stage (rerank.ts): the first stage's best `depth` candidates re-ordered
   * by a linear model of their features (the shipped model, rerank-model.ts, unless a tuning run
   * passes its own; depth 0 or no weights: off). It reorders, never adds.
   */
  rerank?: RerankModel;
}

export const DEFAULT_RANK_OPTIONS: Readonly<RankOptions> = Object.freeze({
  k1: 1.2,
  name: 3,
  server: 1.5,
  lead: 1,
  description: 1,
  params: 0.3,
  b: 0.6,
  related: 0.5,
  replaced: 0.8,
  serverPrior: 1,
  actionBonus: 0.4,
  actionPenalty: 0.3,
  corePenalty: 0.2,
  otherServer: 0.5,
  // Measured on the tuning half (cross-validated): feedback lowers top-1 and does not raise
  // top-3, so it is off by default; the tuning script still tries it.
  feedback: 0,
  feedbackDocs: 2,
  feedbackTerms: 3,
  // Chosen across authors (bench/tool-search-cross.ts: tables learned from four tuning files, the
  // fifth ranked; on the first and on the third file): 0.4 was right for one author's 429
  // requests, a table learned from 3,500 earns more weight (0.8–1.6 level on the first file).
  learned: 1.2,
  // Cross-validated with the re-ranker (bench/tool-search-rerank-cv.ts): lower weights add
  // nothing, higher ones let a word's other senses crowd out the tools it names.
  wordnet: 0.2,
  wordnetReplaced: 0.6,
  rerank: RERANK_MODEL,
});

/** What separates an MCP server's name from its tool's in an id (mcp/names.ts). */
const SEPARATOR = '__';
const FIELDS = 5;
// Fields in order: name, server, first sentence, description, parameters (buildDoc).
const NAME = 0;
const SERVER = 1;
const LEAD = 2;

const ACTIONS = Object.keys(TOOL_VERBS) as Action[];
const TOOL_VERB = new Map<string, Action>();
for (const a of ACTIONS) for (const v of TOOL_VERBS[a]) if (!TOOL_VERB.has(v)) TOOL_VERB.set(v, a);

/** Words a glued name may be made of: the lexicon's, the verbs', and a few API words. */
const KNOWN = new Set<string>(['by', 'id', 'ids', 'to', 'for', 'from', 'in', 'on', 'of', 'or', 'and', 'with', 'all', 'my', 'me', 'this', 'info', 'details', 'item', 'items', 'list', 'get', 'set', 'url', 'urls', 'name', 'names', 'user', 'users', 'data', 'type', 'types', 'status', 'state', 'page', 'pages', 'file', 'files', 'comment', 'comments', 'tag', 'tags', 'stats', 'content', 'paginated', 'number', 'numbers', 'need', 'needs', 'addon', 'assigned', 'incoming', 'outgoing', 'local', 'unarchive', 'sub', 'account', 'accounts', 'format', 'google', 'slides', 'slide', 'doc', 'docs', 'text', 'image', 'color', 'style', 'view', 'views', 'member', 'members', 'membership', 'project', 'projects', 'team', 'teams', 'label', 'labels', 'issue', 'issues', 'customer', 'customers', 'template', 'templates', 'workflow', 'state', 'states', 'cycle', 'cycles', 'release', 'releases', 'pipeline', 'stage', 'stages', 'initiative', 'update', 'updates', 'search', 'module', 'provider', 'policy', 'resource', 'usage', 'record', 'records', 'today', 'month', 'daily', 'monthly', 'yearly', 'credential', 'mapping', 'address', 'phone', 'call', 'calls', 'conference', 'participant', 'queue', 'recording', 'transcription', 'short', 'code', 'key', 'keys', 'signing', 'toll', 'free', 'mobile', 'available', 'application', 'app', 'apps', 'connect', 'authorized', 'dependent', 'notification', 'feedback', 'media', 'message', 'messages', 'sip', 'domain', 'ip', 'access', 'control', 'auth', 'oauth', 'managed', 'audit', 'event', 'events', 'saved', 'webhook', 'webhooks', 'document', 'documents', 'attachment', 'attachments', 'milestone', 'by', 'need', 'emoji', 'reaction', 'favorite', 'roadmap', 'integration', 'entity', 'external', 'organization', 'viewer', 'sheet', 'sheets', 'paragraph', 'table', 'tab', 'cell', 'range', 'row', 'rows', 'column', 'columns', 'permission', 'permissions', 'folder', 'shared', 'drive', 'drives', 'trash', 'copy', 'move', 'rename', 'upload', 'download', 'export']);
for (const [said, means] of RELATED) for (const w of [...said, ...means]) for (const x of words(w)) KNOWN.add(x);
for (const a of ACTIONS) for (const v of TOOL_VERBS[a]) KNOWN.add(v);

const HTTP_METHODS = new Set(['get', 'post', 'put', 'patch']);

interface ToolDoc {
  tool: Searchable;
  group: string;
  counts: Array<Map<string, number>>;
  lengths: number[];
  /** What the tool's name says it does; the name's first verb wins. */
  action: Action | undefined;
  /** The name without its server, lower-cased (`list_pull_requests`). */
  bare: string;
}

function firstSentence(text: string): string {
  const cut = text.slice(0, 300);
  for (let i = 0; i < cut.length - 1; i++) if ((cut[i] === '.' || cut[i] === '\n') && (cut[i + 1] === ' ' || cut[i + 1] === '\n')) return cut.slice(0, i);
  return cut;
}

function paramText(parameters: Record<string, unknown>): string {
  const props = parameters.properties;
  if (!props || typeof props !== 'object') return '';
  const parts: string[] = [];
  for (const [name, p] of Object.entries(props as Record<string, unknown>)) {
    parts.push(name);
    if (p && typeof p === 'object') {
      const { description, enum: values } = p as { description?: unknown; enum?: unknown };
      if (typeof description === 'string') parts.push(description.slice(0, 300));
      if (Array.isArray(values)) for (const v of values.slice(0, 20)) if (typeof v === 'string') parts.push(v);
    }
  }
  return parts.join(' ');
}

function count(list: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const w of list) m.set(w, (m.get(w) ?? 0) + 1);
  return m;
}

function buildDoc(tool: Searchable): ToolDoc {
  const cut = tool.id.indexOf(SEPARATOR);
  const group = cut > 0 ? tool.id.slice(0, cut) : '';
  const bare = cut > 0 ? tool.id.slice(cut + SEPARATOR.length) : tool.id;
  const params = paramText(tool.parameters);
  const local = new Set([...words(tool.description), ...words(params)]);
  const known = (w: string) => local.has(w) || KNOWN.has(w) || (w.length > 3 && w.endsWith('s') && (local.has(w.slice(0, -1)) || KNOWN.has(w.slice(0, -1))));
  const nameWords: string[] = [];
  for (const w of words(bare)) {
    nameWords.push(w);
    if (w.length >= 5 && !known(w)) for (const part of segment(w, known) ?? []) if (part.length > 1) nameWords.push(part);
  }
  // The name's first verb says what it does, unless it is an HTTP method before the real verb
  // (`API-post-search` searches).
  let action: Action | undefined;
  for (let k = 0; k < nameWords.length; k++) {
    const a = TOOL_VERB.get(nameWords[k]!);
    if (!a) continue;
    action = a;
    if (!HTTP_METHODS.has(nameWords[k]!)) break;
    const later = nameWords.slice(k + 1).find((w) => TOOL_VERB.has(w) && !HTTP_METHODS.has(w));
    if (later) action = TOOL_VERB.get(later);
    break;
  }
  const nameTerms = nameWords.filter((w) => w.length > 1 && !STOP.has(w)).map(stem);
  // `get` is a stop word for requests but is what a name says: keep the verbs in the name.
  for (const w of nameWords) if (STOP.has(w) && TOOL_VERB.has(w)) nameTerms.push(stem(w));
  const serverTerms = terms(group).filter((w) => w !== 'mcp' && w !== 'server');
  const fields = [nameTerms, serverTerms, terms(firstSentence(tool.description)), terms(tool.description), terms(params)];
  return { tool, group, counts: fields.map(count), lengths: fields.map((f) => f.length), action, bare };
}

/** The terms a learned translation may lead to: the tool's name, server and first sentence. */
export const learningTerms = (tool: Searchable): string[] => {
  const doc = buildDoc(tool);
  return [...new Set([NAME, SERVER, LEAD].flatMap((f) => [...doc.counts[f]!.keys()]))];
};

/** The words of a tool's name as the index holds them (glued names split): for tests and tuning. */
export const nameWords = (tool: Searchable): string[] => [...buildDoc(tool).counts[NAME]!.keys()];

/** A tool's terms, kept per parameters object (its schema outlives the turn's definitions). */
const docs = new WeakMap<object, ToolDoc>();
function docOf(tool: Searchable): ToolDoc {
  const hit = docs.get(tool.parameters);
  if (hit && hit.tool.id === tool.id && hit.tool.description === tool.description) return hit.tool === tool ? hit : { ...hit, tool };
  const doc = buildDoc(tool);
  docs.set(tool.parameters, doc);
  return doc;
}

/** The tools holding a term, and its field-weighted, length-normalised frequency in each. */
interface Postings {
  docs: Int32Array;
  tfs: Float64Array;
}

/** Packs term → (doc, tf) pairs into typed arrays: thousands of tools, few objects. */
function pack(lists: Map<string, number[]>): Map<string, Postings> {
  const out = new Map<string, Postings>();
  for (const [t, pairs] of lists) {
    const docs = new Int32Array(pairs.length / 2);
    const tfs = new Float64Array(pairs.length / 2);
    for (let k = 0; k < docs.length; k++) {
      docs[k] = pairs[2 * k]!;
      tfs[k] = pairs[2 * k + 1]!;
    }
    out.set(t, { docs, tfs });
  }
  return out;
}

interface SurfaceIndex {
  docs: ToolDoc[];
  options: RankOptions;
  postings: Map<string, Postings>;
  groups: string[];
  groupOf: number[];
  groupPostings: Map<string, Postings>;
  /** The tools whose name, server or first sentence holds a term (what a translation may reach). */
  learnPostings: Map<string, Int32Array>;
}

function buildIndex(list: ToolDoc[], options: RankOptions): SurfaceIndex {
  const weights = [options.name, options.server, options.lead, options.description, options.params];
  const norm = [0, 0, options.b, options.b, options.b];
  const avg = new Array<number>(FIELDS).fill(0);
  for (const d of list) for (let f = 0; f < FIELDS; f++) avg[f]! += d.lengths[f]! / Math.max(1, list.length);
  const lists = new Map<string, number[]>();
  list.forEach((d, i) => {
    for (let f = 0; f < FIELDS; f++) {
      const lengthNorm = 1 - norm[f]! + (norm[f]! * d.lengths[f]!) / Math.max(1, avg[f]!);
      for (const [t, n] of d.counts[f]!) {
        let p = lists.get(t);
        if (!p) lists.set(t, (p = []));
        const v = (weights[f]! * n) / lengthNorm;
        // Fields are walked in turn for one tool: a term seen in an earlier field is the last pair.
        if (p.length > 0 && p[p.length - 2] === i) p[p.length - 1]! += v;
        else p.push(i, v);
      }
    }
  });
  const postings = pack(lists);
  // A server's tools taken together: its name and its tools' names (what it offers, not how it explains it).
  const groups: string[] = [];
  const groupIndex = new Map<string, number>();
  const groupOf = list.map((d) => {
    let g = groupIndex.get(d.group);
    if (g === undefined) {
      g = groups.length;
      groups.push(d.group);
      groupIndex.set(d.group, g);
    }
    return g;
  });
  const groupCounts = groups.map(() => new Map<string, number>());
  const groupLengths = new Array<number>(groups.length).fill(0);
  list.forEach((d, i) => {
    const g = groupOf[i]!;
    for (const f of [NAME, SERVER]) {
      for (const [t, n] of d.counts[f]!) groupCounts[g]!.set(t, (groupCounts[g]!.get(t) ?? 0) + n);
      groupLengths[g]! += d.lengths[f]!;
    }
  });
  const groupAvg = groupLengths.reduce((a, b) => a + b, 0) / Math.max(1, groups.length);
  const groupLists = new Map<string, number[]>();
  groupCounts.forEach((counts, g) => {
    const lengthNorm = 1 - 0.75 + (0.75 * groupLengths[g]!) / Math.max(1, groupAvg);
    for (const [t, n] of counts) {
      let p = groupLists.get(t);
      if (!p) groupLists.set(t, (p = []));
      p.push(g, n / lengthNorm);
    }
  });
  const groupPostings = pack(groupLists);
  const learnLists = new Map<string, number[]>();
  list.forEach((d, i) => {
    for (const t of new Set([NAME, SERVER, LEAD].flatMap((f) => [...d.counts[f]!.keys()]))) {
      let p = learnLists.get(t);
      if (!p) learnLists.set(t, (p = []));
      p.push(i);
    }
  });
  const learnPostings = new Map<string, Int32Array>();
  for (const [t, p] of learnLists) learnPostings.set(t, Int32Array.from(p));
  return { docs: list, options, postings, groups, groupOf, groupPostings, learnPostings };
}

/** Only the field weights and length normalisation shape an index; the rest weigh a query. */
const sameIndexOptions = (a: RankOptions, b: RankOptions) =>
  a === b || (a.name === b.name && a.server === b.server && a.lead === b.lead && a.description === b.description && a.params === b.params && a.b === b.b);

/** The last few surfaces ranked (a surface is the same from one search of a turn to the next). */
const recent: SurfaceIndex[] = [];
const RECENT = 4;
function indexFor(tools: readonly Searchable[], options: RankOptions): SurfaceIndex {
  const list = tools.map(docOf);
  const same = (ix: SurfaceIndex) => sameIndexOptions(ix.options, options) && ix.docs.length === list.length && ix.docs.every((d, i) => d.tool.id === list[i]!.tool.id && d.counts === list[i]!.counts);
  const at = recent.findIndex(same);
  if (at >= 0) {
    const hit = recent[at]!;
    recent.splice(at, 1);
    recent.unshift(hit);
    // The cached docs may hold an earlier turn's definition objects: answer with this turn's.
    return hit.docs.every((d, i) => d.tool === list[i]!.tool) ? hit : { ...hit, docs: list };
  }
  const built = buildIndex(list, options);
  recent.unshift(built);
  if (recent.length > RECENT) recent.pop();
  return built;
}

// The lexicon's entries by their first word; phrases are matched word by word.
const CUES = new Map<string, Array<{ words: string[]; last: string; means: string[] }>>();
for (const [said, means] of RELATED) {
  const stems = [...new Set(means.flatMap((m) => terms(m)))];
  for (const phrase of said) {
    const ws = words(phrase);
    if (ws.length === 0) continue;
    let list = CUES.get(ws[0]!);
    if (!list) CUES.set(ws[0]!, (list = []));
    list.push({ words: ws, last: stem(ws[ws.length - 1]!), means: stems });
  }
}
const ACTION_PHRASES: Array<{ words: string[]; last: string; action: Action }> = [];
for (const a of ACTIONS) {
  for (const cue of ACTION_CUES[a]) {
    const ws = words(cue);
    ACTION_PHRASES.push({ words: ws, last: stem(ws[ws.length - 1]!), action: a });
  }
}
// Longer phrases first: `look for` is a search, `look` alone says nothing.
ACTION_PHRASES.sort((x, y) => y.words.length - x.words.length);
/** Question words: a question asks to read, whatever else it mentions. */
const QUESTION = new Set(['which', 'what', 'whats', 'who', 'whose', 'where', 'when', 'how', 'any', 'is', 'are', 'do', 'does', 'did', 'show', 'list']);

/** Whether a phrase starts at word i; its last word may be inflected (`merged` for `merge`). */
function startsAt(ws: string[], stems: string[], i: number, phrase: { words: string[]; last: string }): boolean {
  const n = phrase.words.length;
  for (let k = 0; k < n - 1; k++) if (ws[i + k] !== phrase.words[k]) return false;
  return ws[i + n - 1] === phrase.words[n - 1] || stems[i + n - 1] === phrase.last;
}

const OPENERS = new Set(['(', '"', "'", '`']);
const CLOSERS = new Set([')', '"', "'", '`', ',', '.', ':', ';', '!', '?']);
const isLetter = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * What the shape of a request's tokens says, whatever the words: `ENG-77` is a ticket, `#412`
 * an issue or pull request number, `#support` a channel, an emoji a reaction, `*.csv` a file
 * pattern, `config.yaml` or `data/` a file, a URL a web page, an address an email. Plain scans.
 */
function shapes(query: string): string[] {
  const out = new Set<string>();
  const add = (...ts: string[]) => ts.forEach((t) => out.add(stem(t)));
  for (const token of query.split(' ')) {
    if (!token) continue;
    let from = 0;
    let to = token.length;
    while (from < to && OPENERS.has(token[from]!)) from++;
    while (to > from && CLOSERS.has(token[to - 1]!)) to--;
    const t = token.slice(from, to);
    let letters = 0;
    while (letters < t.length && isLetter(t.charCodeAt(letters))) letters++;
    if (letters >= 2 && t[letters] === '-' && letters + 1 < t.length && [...t.slice(letters + 1)].every((ch) => isDigit(ch.charCodeAt(0)))) add('issue', 'ticket');
    if (t.startsWith('#') && t.length > 1) {
      if ([...t.slice(1)].every((ch) => isDigit(ch.charCodeAt(0)))) add('issue', 'pull', 'request', 'number');
      else add('channel');
    }
    if (t.includes('*') || t.includes('?')) add('search', 'pattern', 'file', 'glob');
    if (t.startsWith('http://') || t.startsWith('https://')) add('url', 'navigate', 'fetch', 'page');
    else if (t.includes('@') && t.indexOf('@') > 0 && t.indexOf('.', t.indexOf('@')) > 0) add('email', 'user', 'address');
    else if (t.includes('/') || (t.lastIndexOf('.') > 0 && t.lastIndexOf('.') >= t.length - 5 && isLetter(t.charCodeAt(t.length - 1)))) add('file', 'path', 'content');
    for (const ch of t) if (ch.codePointAt(0)! >= 0x2600) add('reaction', 'emoji');
  }
  return [...out];
}

/** Words a request may use that are not in any tool's text but still mean something here. */
const UNDERSTOOD = new Set<string>([...CUES.keys(), ...ACTION_PHRASES.flatMap((p) => p.words)]);
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * A word no tool and no lexicon entry knows, one typo away from one they do (`lsit` → `list`,
 * `flakng` → `flaking`), is read as that word; anything else stays as written.
 */
function corrected(w: string, index: SurfaceIndex): string {
  if (w.length < 4 || STOP.has(w) || UNDERSTOOD.has(w) || index.postings.has(stem(w)) || !isLetter(w.charCodeAt(0))) return w;
  const known = (v: string) => UNDERSTOOD.has(v) || index.postings.has(stem(v));
  for (let i = 0; i + 1 < w.length; i++) {
    const v = w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2);
    if (known(v)) return v;
  }
  for (let i = 0; i < w.length; i++) {
    const v = w.slice(0, i) + w.slice(i + 1);
    if (v.length >= 3 && known(v)) return v;
  }
  for (let i = 0; i <= w.length; i++) {
    for (const c of LETTERS) {
      const v = w.slice(0, i) + c + w.slice(i);
      if (known(v)) return v;
    }
  }
  return w;
}

interface ParsedQuery {
  weights: Map<string, number>;
  action: Action | undefined;
  /** The request's own terms (typos corrected), for the learned translations. */
  own: string[];
}

function parseQuery(query: string, options: RankOptions, index: SurfaceIndex): ParsedQuery {
  const ws = words(query).map((w) => corrected(w, index));
  const stems = ws.map(stem);
  const weights = new Map<string, number>();
  for (const w of ws) if (w.length > 1 && !STOP.has(w)) weights.set(stem(w), 1);
  const relate = (means: string[], weight: number) => {
    for (const t of means) if ((weights.get(t) ?? 0) < weight) weights.set(t, weight);
  };
  for (let i = 0; i < ws.length; i++) {
    // A word no tool here uses (`prs`, `k8s`) is jargon: what it stands for takes its place.
    const unknown = !index.postings.has(stems[i]!);
    for (const cue of CUES.get(ws[i]!) ?? []) {
      if (!startsAt(ws, stems, i, cue)) continue;
      relate(cue.means, unknown && cue.words.length === 1 ? options.replaced : options.related);
      // A short form of a word (`repo`, `orgs`, `db`… of `repository`, `organization`) is that word.
      if (cue.words.length === 1) relate(cue.means.filter((t) => t.length > stems[i]!.length && t.startsWith(stems[i]!.endsWith('s') ? stems[i]!.slice(0, -1) : stems[i]!)), options.replaced);
    }
    // `repos`, `dbs`: the lexicon lists the forms people write; a plural of a listed word counts too.
    if (!CUES.has(ws[i]!) && ws[i]!.endsWith('s')) {
      for (const cue of CUES.get(ws[i]!.slice(0, -1)) ?? []) if (cue.words.length === 1) relate(cue.means, unknown ? options.replaced : options.related);
    }
  }
  // `data sources` is `datasources` in a tool's name: two words glued count as one.
  for (let i = 0; i + 1 < ws.length; i++) {
    if (STOP.has(ws[i]!) || STOP.has(ws[i + 1]!)) continue;
    const glued = stem(ws[i]! + ws[i + 1]!);
    if (index.postings.has(glued) && (weights.get(glued) ?? 0) < 1) weights.set(glued, 1);
  }
  for (const t of shapes(query)) if ((weights.get(t) ?? 0) < options.related) weights.set(t, options.related);
  if (options.wordnet > 0 || options.wordnetReplaced > 0) {
    // `bill` for a tool's `invoice`, `deploy` for its `deployment`: general English, discounted by
    // how often the sense relating the words is the one meant; only words some tool here uses.
    for (const w of new Set(stems)) {
      if (w.length < 3 || STOP.has(w) || weights.get(w) !== 1) continue;
      const scale = index.postings.has(w) ? options.wordnet : options.wordnetReplaced;
      for (const [t, r] of relatedWords(w)) {
        if (!index.postings.has(t)) continue;
        const v = scale * r;
        if ((weights.get(t) ?? 0) < v) weights.set(t, v);
      }
    }
  }
  const votes = new Map<Action, number>();
  for (let i = 0; i < ws.length; i++) {
    for (const p of ACTION_PHRASES) {
      if (!startsAt(ws, stems, i, p)) continue;
      votes.set(p.action, (votes.get(p.action) ?? 0) + (i === 0 ? 2 : 1));
      i += p.words.length - 1;
      break;
    }
  }
  let action: Action | undefined;
  let best = 0;
  for (const [a, v] of votes) if (v > best) [action, best] = [a, v];
  // A question asks to read, whatever verb it holds (`which PRs are waiting to be merged`);
  // `which PRs`, `show the open incidents`: a plural object read is a listing, not one record.
  if (QUESTION.has(ws[0] ?? '')) action = pluralObject(ws) || ws[0] === 'which' || ws[0] === 'any' || ws[0] === 'list' ? 'list' : action === 'search' ? 'search' : 'get';
  else if (action === 'get' && pluralObject(ws)) action = 'list';
  const own = [...new Set(ws.filter((w) => w.length > 1 && !STOP.has(w)).map(stem))];
  return { weights, action, own };
}

const NOT_PLURAL = new Set(['is', 'was', 'has', 'does', 'this', 'its', 'us', 'yes', 'sms', 'dns', 'aws', 'status', 'access', 'always', 'across', 'plus', 'kubernetes', 'news', 'analysis', 'process', 'address', 'business', 'less', 'unless']);
const pluralObject = (ws: string[]) => ws.some((w) => w.length > 3 && w.endsWith('s') && !w.endsWith('ss') && !NOT_PLURAL.has(w));

const READS = new Set<Action>(['list', 'get', 'search']);
/** How well a tool's action serves a request's: 1 the same, a fraction near, negative opposed. */
function actionMatch(want: Action | undefined, has: Action | undefined): number {
  if (!want || !has) return 0;
  if (want === has) return 1;
  if (READS.has(want) && READS.has(has)) return want === 'get' || has === 'get' ? 0.3 : 0.6;
  // `add a panel to the dashboard` updates it; `set a reminder` creates one: near enough.
  if ((want === 'create' && has === 'update') || (want === 'update' && has === 'create')) return 0;
  return -1;
}

export function rankTools(query: string, tools: readonly Searchable[], limit: number, options: RankOptions = DEFAULT_RANK_OPTIONS): Searchable[] {
  return rankDetailed(query, tools, limit, options).map((r) => r.tool);
}

/** The ranking with scores, for the bench and the tests. */
export function rankDetailed(query: string, tools: readonly Searchable[], limit: number, options: RankOptions = DEFAULT_RANK_OPTIONS): Array<{ tool: Searchable; score: number }> {
  if (tools.length === 0 || limit <= 0) return [];
  const model = options.rerank;
  const depth = model && model.weights.length === FEATURES.length ? model.depth : 0;
  const first = firstStage(query, tools, Math.max(limit, depth), options);
  if (depth <= 0) return first.top.slice(0, limit).map(({ tool, score }) => ({ tool, score }));
  return rerank(first, model!.weights, depth).slice(0, limit);
}

/**
 * The first stage's best `depth` candidates that the re-ranker reorders (MCP servers' tools, not
 * an exact id typed) with their feature vectors (FEATURES order), for training it. The first
 * stage runs as configured; `options.rerank` is not applied.
 */
export function rankCandidates(query: string, tools: readonly Searchable[], depth: number, options: RankOptions = DEFAULT_RANK_OPTIONS): Array<{ tool: Searchable; features: Float64Array }> {
  if (tools.length === 0 || depth <= 0) return [];
  const first = firstStage(query, tools, depth, options);
  const out: Array<{ tool: Searchable; features: Float64Array }> = [];
  first.top.forEach((c, r) => {
    if (reorderable(first, c)) out.push({ tool: c.tool, features: features(first, c, r) });
  });
  return out;
}

/** An MCP server's tool the request did not name exactly: Warden's own tools and exact ids keep their places. */
function reorderable(first: FirstStage, c: Scored): boolean {
  const doc = first.index.docs[c.at]!;
  return doc.group !== '' && c.tool.id !== first.wanted && doc.bare !== first.wanted;
}

interface FirstStage extends Scoring {
  top: Scored[];
  wanted: string;
  own: readonly string[];
  action: Action | undefined;
  evidence: Float64Array | undefined;
  table: Translations;
  index: SurfaceIndex;
  options: RankOptions;
}

function firstStage(query: string, tools: readonly Searchable[], limit: number, options: RankOptions): FirstStage {
  const wanted = query.trim().toLowerCase();
  const index = indexFor(tools, options);
  const { weights, action, own } = parseQuery(query, options, index);
  // With the translations off (learned 0) the table is not read, by the re-ranker's features either.
  const table = options.learned > 0 ? (options.translations ?? TRANSLATIONS) : NO_TRANSLATIONS;
  const evidence = options.learned > 0 ? learnedEvidence(own, index, table) : undefined;
  // `mongo` for `mongodb`, `cloudflar` typed short: a request word that begins a server's name
  // (four letters or more) names that server.
  const said = [...weights].filter(([t, w]) => w === 1 && t.length >= 4).map(([t]) => t);
  for (const name of index.groups) {
    if (!name || weights.get(stem(name)) === 1) continue;
    if (said.some((t) => name.startsWith(t))) weights.set(stem(name), 1);
  }
  if (options.feedback > 0 && options.feedbackDocs > 0 && options.feedbackTerms > 0) {
    // Rocchio without labels: the words the first pass's best tools have in common are the
    // catalog's own words for what the request asks (`copies` finds a scale tool whose text
    // says `replicas`, and `replicas` then finds the others). Learned from the surface, never
    // from requests.
    const pass = scoreTools(wanted, weights, action, index, options, options.feedbackDocs, evidence);
    const expansion = feedbackTerms(pass.top.map((r) => r.at), weights, index, options);
    for (const [t, w] of expansion) weights.set(t, w);
  }
  const scored = scoreTools(wanted, weights, action, index, options, limit, evidence);
  return { ...scored, wanted, own, action, evidence, table, index, options };
}

/** What every candidate's features read of the request, worked out once a search. */
interface Prepared {
  /** The request's weighted terms found on the surface, and weight × idf of each. */
  terms: string[];
  weightIdf: Float64Array;
  byTerm: Map<string, number>;
  /** The request's own terms' idf, and their translation rows. */
  ownIdf: Float64Array;
  ownIdfSum: number;
  rows: Array<ReadonlyArray<readonly [string, number]>>;
  /** Tool term → the largest p(term | request term) of the request's own terms (1 for a term the request says). */
  reach: Map<string, number>;
  /** Tool term → the largest general-English relation weight from a request term (related-words.ts). */
  related: Map<string, number>;
  /** Per request term, its related words (the same rows, in `own` order). */
  relatedRows: Array<ReadonlyArray<readonly [string, number]>>;
}

const prepared = new WeakMap<FirstStage, Prepared>();
function prepare(s: FirstStage): Prepared {
  const hit = prepared.get(s);
  if (hit) return hit;
  const n = s.index.docs.length;
  const idf = (t: string) => {
    const df = s.index.postings.get(t)?.docs.length ?? 0;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  };
  const terms: string[] = [];
  const weightIdf: number[] = [];
  for (const [t, w] of s.weights) {
    if (!s.index.postings.has(t)) continue;
    terms.push(t);
    weightIdf.push(w * idf(t));
  }
  const ownIdf = Float64Array.from(s.own, idf);
  const rows = s.own.map((q) => s.table.get(q) ?? []);
  const reach = new Map<string, number>();
  s.own.forEach((q, k) => {
    reach.set(q, 1);
    for (const [t, p] of rows[k]!) if ((reach.get(t) ?? 0) < p) reach.set(t, p);
  });
  const relatedRows = s.own.map((q) => (q.length < 3 ? [] : relatedWords(q)));
  const related = new Map<string, number>();
  for (const row of relatedRows) for (const [t, r] of row) if ((related.get(t) ?? 0) < r) related.set(t, r);
  const out = { terms, weightIdf: Float64Array.from(weightIdf), byTerm: new Map(terms.map((t, k) => [t, weightIdf[k]!])), ownIdf, ownIdfSum: ownIdf.reduce((a, b) => a + b, 0), rows, reach, related, relatedRows };
  prepared.set(s, out);
  return out;
}

const NO_TRANSLATIONS: Translations = new Map();

/** Verb words of tool names, stemmed: what is left of a name is its object. */
const VERB_TERMS = new Set([...TOOL_VERB.keys()].map(stem));

/** A candidate's features (FEATURES order); r is its first-stage rank. */
function features(s: FirstStage, c: Scored, r: number): Float64Array {
  const p = prepare(s);
  const x = new Float64Array(FEATURES.length);
  const doc = s.index.docs[c.at]!;
  const [name, server, lead, description, params] = doc.counts as [Map<string, number>, Map<string, number>, Map<string, number>, Map<string, number>, Map<string, number>];
  const k1 = s.options.k1;
  const best = s.top[0]!.score;
  x[0] = Number.isFinite(c.score) && Number.isFinite(best) && best > 0 ? Math.log(Math.max(c.score, 1e-9) / best) : 0;
  x[1] = 1 / (1 + r);
  for (let f = 0; f < FIELDS; f++) {
    const field = doc.counts[f]!;
    // Walk the smaller side: the request's terms or the field's.
    if (field.size < p.terms.length) {
      for (const [t, tf] of field) {
        const wi = p.byTerm.get(t);
        if (wi !== undefined) x[2 + f]! += wi * (tf / (tf + k1));
      }
    } else {
      for (let k = 0; k < p.terms.length; k++) {
        const tf = field.get(p.terms[k]!);
        if (tf) x[2 + f]! += p.weightIdf[k]! * (tf / (tf + k1));
      }
    }
  }
  const inHead = (t: string) => name.has(t) || server.has(t) || lead.has(t);
  const inRest = (t: string) => description.has(t) || params.has(t);
  let any = 0;
  let head = 0;
  let idfHit = 0;
  let explainedHead = 0;
  let explainedAll = 0;
  let relatedHead = 0;
  for (let k = 0; k < s.own.length; k++) {
    const q = s.own[k]!;
    const qHead = inHead(q) ? 1 : 0;
    const qAny = qHead || inRest(q) ? 1 : 0;
    // A term the tool does not hold, that a word of its name, server or first sentence means in general English.
    if (!qAny) {
      let best = 0;
      for (const [t, r] of p.relatedRows[k]!) if (r > best && inHead(t)) best = r;
      relatedHead += best;
    }
    any += qAny;
    head += qHead;
    if (qAny) idfHit += p.ownIdf[k]!;
    // The term's best translation into the tool's words (rows are sorted, likeliest first).
    let h = qHead;
    let a = qAny;
    for (const [t, pt] of p.rows[k]!) {
      if (pt <= a && pt <= h) break;
      if (inHead(t)) {
        if (pt > h) h = pt;
        if (pt > a) a = pt;
      } else if (pt > a && inRest(t)) a = pt;
    }
    explainedHead += h;
    explainedAll += a;
  }
  const m = Math.max(1, s.own.length);
  x[7] = any / m;
  x[8] = head / m;
  x[9] = p.ownIdfSum > 0 ? idfHit / p.ownIdfSum : 0;
  let nameSaid = 0;
  let nameReach = 0;
  let objects = 0;
  let objectSaid = 0;
  let objectReach = 0;
  let objectRelated = 0;
  for (const t of name.keys()) {
    const said = s.weights.has(t) ? 1 : 0;
    if (!said && !VERB_TERMS.has(t)) objectRelated += p.related.get(t) ?? 0;
    const reach = Math.max(said, p.reach.get(t) ?? 0);
    nameSaid += said;
    nameReach += reach;
    if (!VERB_TERMS.has(t)) {
      objects++;
      objectSaid += said;
      objectReach += reach;
    }
  }
  x[10] = name.size > 0 ? nameSaid / name.size : 0;
  x[11] = name.size > 0 ? nameReach / name.size : 0;
  x[12] = objects > 0 ? objectSaid / objects : 0;
  x[13] = objects > 0 ? objectReach / objects : 0;
  let leadReach = 0;
  for (const t of lead.keys()) leadReach += s.weights.has(t) ? 1 : (p.reach.get(t) ?? 0);
  x[14] = lead.size > 0 ? leadReach / lead.size : 0;
  x[15] = s.evidence ? s.evidence[c.at]! : 0;
  const match = actionMatch(s.action, doc.action);
  x[16] = Math.max(0, match);
  x[17] = match < 0 ? 1 : 0;
  x[18] = doc.action === undefined ? 1 : 0;
  x[19] = s.bestGroup > 0 && doc.group !== '' ? s.groupScores[s.index.groupOf[c.at]!]! / s.bestGroup : 0;
  x[20] = s.named.has(s.index.groupOf[c.at]!) ? 1 : 0;
  x[21] = Math.log(1 + name.size);
  x[22] = explainedHead / m;
  x[23] = explainedAll / m;
  x[24] = objects > 0 ? objectRelated / objects : 0;
  x[25] = relatedHead / m;
  return x;
}

/**
 * The best `depth` first-stage candidates with the MCP servers' tools among them re-ordered by
 * the model's score, in the places they held; Warden's own tools and an exact id or bare name the
 * request typed keep theirs. The re-ordered tools carry the model's score, the others the first
 * stage's. Nothing is added: the output is a permutation of the first stage's.
 */
function rerank(first: FirstStage, weights: readonly number[], depth: number): Array<{ tool: Searchable; score: number }> {
  const out = first.top.map((c) => ({ tool: c.tool, score: c.score }));
  const places: number[] = [];
  const moved: Array<{ c: Scored; s: number; r: number }> = [];
  first.top.forEach((c, r) => {
    if (r >= depth || !reorderable(first, c)) return;
    places.push(r);
    moved.push({ c, s: linearScore(weights, features(first, c, r)), r });
  });
  moved.sort((a, b) => b.s - a.s || a.r - b.r);
  moved.forEach((m, k) => (out[places[k]!] = { tool: m.c.tool, score: m.s }));
  return out;
}

/**
 * The terms most shared by the given tools' names and lead sentences, weighted by how rare they
 * are on the surface, scaled to at most `options.feedback`; none the request already holds.
 */
function feedbackTerms(at: number[], weights: Map<string, number>, index: SurfaceIndex, options: RankOptions): Map<string, number> {
  const n = index.docs.length;
  const mass = new Map<string, number>();
  at.forEach((i, rank) => {
    const doc = index.docs[i]!;
    // Higher-ranked tools count more; a term counts once a tool.
    const share = 1 / (1 + rank);
    const seen = new Set<string>();
    for (const f of [NAME, LEAD]) for (const t of doc.counts[f]!.keys()) seen.add(t);
    for (const t of seen) {
      if (weights.has(t) || t.length < 3) continue;
      const df = index.postings.get(t)?.docs.length ?? n;
      // A term of one tool alone says nothing shared; a term of most tools says nothing at all.
      if (df < 2 || df > n / 10) continue;
      mass.set(t, (mass.get(t) ?? 0) + share * Math.log(1 + (n - df + 0.5) / (df + 0.5)));
    }
  });
  const ranked = [...mass].filter(([, m]) => m > 0).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, options.feedbackTerms);
  const top = ranked[0]?.[1] ?? 0;
  return new Map(ranked.map(([t, m]) => [t, (options.feedback * m) / top]));
}

interface Scored {
  tool: Searchable;
  score: number;
  at: number;
}

/**
 * Per tool, Σ over the request's terms of ln(1 + Σ p(t | term)) for the words t of the tool's
 * name, server and first sentence that the term stood for in labelled requests; undefined when no
 * request term has a translation. Only the surface's tools are touched.
 */
function learnedEvidence(own: readonly string[], index: SurfaceIndex, table: Translations): Float64Array | undefined {
  const n = index.docs.length;
  let out: Float64Array | undefined;
  const acc = new Float64Array(n);
  const touched: number[] = [];
  for (const q of own) {
    const row = table.get(q);
    if (!row) continue;
    for (const [t, p] of row) {
      const list = index.learnPostings.get(t);
      if (!list) continue;
      for (let k = 0; k < list.length; k++) {
        const d = list[k]!;
        if (acc[d] === 0) touched.push(d);
        acc[d]! += p;
      }
    }
    if (touched.length === 0) continue;
    out ??= new Float64Array(n);
    for (const d of touched) {
      out[d]! += Math.log(1 + acc[d]!);
      acc[d] = 0;
    }
    touched.length = 0;
  }
  return out;
}

/** What the first stage's scoring knows of the request beyond each tool's score (the re-ranker's features read it). */
interface Scoring {
  top: Scored[];
  weights: Map<string, number>;
  groupScores: Float64Array;
  bestGroup: number;
  named: Set<number>;
}

function scoreTools(wanted: string, weights: Map<string, number>, action: Action | undefined, index: SurfaceIndex, options: RankOptions, limit: number, evidence?: Float64Array): Scoring {
  const n = index.docs.length;
  const scores = new Float64Array(n);
  for (const [term, weight] of weights) {
    const list = index.postings.get(term);
    if (!list) continue;
    const df = list.docs.length;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    for (let k = 0; k < df; k++) {
      const tf = list.tfs[k]!;
      scores[list.docs[k]!]! += weight * idf * ((tf * (options.k1 + 1)) / (tf + options.k1));
    }
  }
  const g = index.groups.length;
  const groupScores = new Float64Array(g);
  for (const [term, weight] of weights) {
    const list = index.groupPostings.get(term);
    if (!list) continue;
    const df = list.docs.length;
    const idf = Math.log(1 + (g - df + 0.5) / (df + 0.5));
    for (let k = 0; k < df; k++) {
      const tf = list.tfs[k]!;
      groupScores[list.docs[k]!]! += weight * idf * ((tf * 2.2) / (tf + 1.2));
    }
  }
  // Warden's own tools have no server: the prior lifts only the tools of the servers the
  // request speaks of, and a request that speaks of one weighs the generic tools down.
  let bestGroup = 0;
  for (let i = 0; i < g; i++) if (index.groups[i] !== '' && groupScores[i]! > bestGroup) bestGroup = groupScores[i]!;
  const serverTalk = bestGroup > 0;
  // A request that names a server (`on slack`, `in asana`) is about that server's tools.
  const named = new Set<number>();
  for (let gi = 0; gi < g; gi++) {
    const name = index.groups[gi]!;
    if (!name) continue;
    const bare = name.endsWith('2') ? name.slice(0, -1) : name;
    if (weights.get(stem(bare)) === 1 || weights.get(stem(name)) === 1) named.add(gi);
  }
  // The best `limit` kept in order as they come: no array of every scored tool to sort.
  const top: Scored[] = [];
  const before = (a: Scored, b: Scored) => a.score > b.score || (a.score === b.score && a.tool.id < b.tool.id);
  for (let i = 0; i < n; i++) {
    const doc = index.docs[i]!;
    let score = scores[i]!;
    if (doc.tool.id === wanted) score = Number.POSITIVE_INFINITY;
    else if (doc.bare === wanted) score += 1_000;
    if (score <= 0) continue;
    if (bestGroup > 0 && doc.group !== '') score *= 1 + (options.serverPrior * groupScores[index.groupOf[i]!]!) / bestGroup;
    const match = actionMatch(action, doc.action);
    if (match > 0) score *= 1 + options.actionBonus * match;
    else if (match < 0) score *= 1 - options.actionPenalty;
    if (doc.group === '' && serverTalk) score *= 1 - options.corePenalty;
    if (named.size > 0 && !named.has(index.groupOf[i]!)) score *= 1 - options.otherServer;
    if (evidence) score *= 1 + options.learned * evidence[i]!;
    const entry = { tool: doc.tool, score, at: i };
    if (top.length === limit && !before(entry, top[limit - 1]!)) continue;
    let at = top.length;
    while (at > 0 && before(entry, top[at - 1]!)) at--;
    top.splice(at, 0, entry);
    if (top.length > limit) top.pop();
  }
  return { top, weights, groupScores, bestGroup, named };
}

/** A compact TypeScript-like signature of a JSON schema's top level: `{ path: string; limit?: number }`. */
export function signature(schema: Record<string, unknown>): string {
  const props = (schema.properties ?? {}) as Record<string, { type?: unknown; enum?: unknown[] }>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const fields = Object.entries(props).map(([name, p]) => {
    const type = Array.isArray(p?.enum) ? p.enum.map((v) => JSON.stringify(v)).join(' | ') : typeof p?.type === 'string' ? (p.type === 'integer' ? 'number' : p.type) : 'unknown';
    return `${name}${required.has(name) ? '' : '?'}: ${type}`;
  });
  const text = `{ ${fields.join('; ')} }`;
  return text.length > 300 ? `${text.slice(0, 297)}…}` : text;
}
