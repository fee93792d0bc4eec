/**
 * Lexical ranking for tool_search: BM25 over each tool's name, description and parameter
 * names and descriptions, with light English stemming. An exact tool id always comes first.
 */
export interface Searchable {
  id: string;
  description: string;
  parameters: Record<string, unknown>;
}

const STOP = new Set(['a', 'an', 'the', 'to', 'of', 'and', 'or', 'for', 'in', 'on', 'with', 'is', 'it', 'this', 'that', 'by', 'from', 'at', 'as', 'be']);

function stem(word: string): string {
  let w = word;
  for (const suffix of ['ing', 'ed', 'es', 's']) {
    if (w.length > suffix.length + 2 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  // `schedule` and `scheduling` meet at `schedul`.
  return w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w;
}

export function tokens(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1 && !STOP.has(w))
    .map(stem);
}

function documentText(tool: Searchable): string {
  const props = (tool.parameters.properties ?? {}) as Record<string, { description?: unknown }>;
  const params = Object.entries(props).map(([name, p]) => `${name} ${typeof p?.description === 'string' ? p.description : ''}`);
  // The id counts twice: a name says more than a sentence.
  return [tool.id.replaceAll('_', ' '), tool.id.replaceAll('_', ' '), tool.description, ...params].join(' ');
}

interface DocIndex {
  length: number;
  counts: Map<string, number>;
}

/**
 * Term counts of a tool's text, kept per parameters object (the definitions the surface hands in
 * are new objects each turn, their schemas are not): a catalog is ranked again at every search.
 */
const indexes = new WeakMap<object, { key: string; index: DocIndex }>();
function indexOf(tool: Searchable): DocIndex {
  const key = `${tool.id}\u0000${tool.description}`;
  const hit = indexes.get(tool.parameters);
  if (hit && hit.key === key) return hit.index;
  const words = tokens(documentText(tool));
  const counts = new Map<string, number>();
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  const index = { length: words.length, counts };
  indexes.set(tool.parameters, { key, index });
  return index;
}

/**
 * The words people use for what a tool does, mapped to the verbs tool names and descriptions use
 * (`show me the open pull requests` → list, `cancel the subscription` → delete). Each adds its
 * verbs to the query at half weight, so a word the tool's text has itself still counts more.
 */
const INTENT: ReadonlyArray<[words: string[], verbs: string[]]> = [
  [['show', 'display', 'find', 'which', 'what', 'view', 'see', 'browse', 'who', 'look'], ['list', 'get']],
  [['add', 'new', 'open', 'make', 'file', 'post', 'send', 'write', 'start', 'set', 'register', 'publish', 'insert', 'upload', 'book', 'schedule', 'trigger', 'deploy', 'buy', 'save', 'attach'], ['create']],
  [['change', 'edit', 'modify', 'rename', 'move', 'close', 'resolve', 'retry', 'scale', 'turn', 'restore'], ['update']],
  [['remove', 'drop', 'cancel', 'erase', 'purge', 'destroy'], ['delete']],
];
const INTENT_VERBS = new Map<string, string[]>();
for (const [ws, verbs] of INTENT) for (const w of ws) INTENT_VERBS.set(stem(w), verbs.map(stem));
const INTENT_WEIGHT = 0.5;
const LIST = 'list';
const NOT_PLURAL = new Set(['is', 'was', 'has', 'does', 'this', 'its', 'us', 'yes', 'sms', 'dns', 'ss', 'status', 'settings', 'access', 'always', 'across', 'plus']);
const pluralNoun = (query: string): boolean =>
  query
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .some((w) => w.length > 3 && w.endsWith('s') && !w.endsWith('ss') && !NOT_PLURAL.has(w));

export function rankTools(query: string, tools: readonly Searchable[], limit: number): Searchable[] {
  const exact = tools.find((t) => t.id === query.trim().toLowerCase());
  const own = [...new Set(tokens(query))];
  const weights = new Map<string, number>(own.map((t) => [t, 1]));
  for (const t of own) for (const verb of INTENT_VERBS.get(t) ?? []) if (!weights.has(verb)) weights.set(verb, INTENT_WEIGHT);
  // A plural thing asked about (`the open pull requests`, `which extensions`) is a listing.
  if (!weights.has(LIST) && pluralNoun(query)) weights.set(LIST, INTENT_WEIGHT);
  else if (weights.get(LIST) === INTENT_WEIGHT && pluralNoun(query)) weights.set(LIST, 2 * INTENT_WEIGHT);
  const terms = [...weights.keys()];
  if (terms.length === 0) return exact ? [exact] : [];
  const docs = tools.map(indexOf);
  const avg = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length);
  const k1 = 1.2;
  const b = 0.75;
  // Document frequencies once per query, not once per tool (a catalog can hold thousands).
  const dfs = new Map(terms.map((term) => [term, docs.reduce((n, d) => n + (d.counts.has(term) ? 1 : 0), 0)]));
  const scored = tools.map((tool, i) => {
    const doc = docs[i]!;
    let score = 0;
    for (const term of terms) {
      const tf = doc.counts.get(term) ?? 0;
      if (tf === 0) continue;
      const df = dfs.get(term)!;
      const idf = Math.log(1 + (tools.length - df + 0.5) / (df + 0.5));
      score += weights.get(term)! * idf * ((tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * doc.length) / avg)));
    }
    return { tool, score: tool === exact ? Number.POSITIVE_INFINITY : score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b2) => b2.score - a.score || a.tool.id.localeCompare(b2.tool.id))
    .slice(0, limit)
    .map((s) => s.tool);
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
