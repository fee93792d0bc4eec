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

export function rankTools(query: string, tools: readonly Searchable[], limit: number): Searchable[] {
  const exact = tools.find((t) => t.id === query.trim().toLowerCase());
  const terms = [...new Set(tokens(query))];
  if (terms.length === 0) return exact ? [exact] : [];
  const docs = tools.map((t) => tokens(documentText(t)));
  const avg = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length);
  const k1 = 1.2;
  const b = 0.75;
  const scored = tools.map((tool, i) => {
    const doc = docs[i]!;
    let score = 0;
    for (const term of terms) {
      const tf = doc.filter((w) => w === term).length;
      if (tf === 0) continue;
      const df = docs.filter((d) => d.includes(term)).length;
      const idf = Math.log(1 + (tools.length - df + 0.5) / (df + 0.5));
      score += idf * ((tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * doc.length) / avg)));
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
