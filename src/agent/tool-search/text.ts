/**
 * The words of a tool's text and of a request, as tool_search compares them: identifiers split
 * at case changes, underscores and dashes (`listPullRequests`, `list_pull_requests`,
 * `list-pull-requests` are three words), lower-cased, and reduced by a light English stemmer so
 * `merged`, `merging` and `merge` meet. Written as plain scans: no regex here can backtrack.
 */

const isLower = (c: number) => c >= 97 && c <= 122;
const isUpper = (c: number) => c >= 65 && c <= 90;
const isDigit = (c: number) => c >= 48 && c <= 57;

/** Lower-cased words of any text; `HTTPServerURL2` → `http server url2`; `PRs`, `k8s` stay whole. */
export function words(text: string): string[] {
  const out: string[] = [];
  let from = -1;
  const flush = (to: number) => {
    if (from >= 0) out.push(text.slice(from, to).toLowerCase());
    from = -1;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isLower(c) || isDigit(c)) {
      if (from < 0) from = i;
    } else if (isUpper(c)) {
      const prev = i > 0 ? text.charCodeAt(i - 1) : 0;
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      const after = i + 2 < text.length ? text.charCodeAt(i + 2) : 0;
      // A new word starts at `aB` and at the last capital of `HTTPServer`, not of `PRs`.
      if (from >= 0 && (isLower(prev) || isDigit(prev) || (isUpper(prev) && isLower(next) && isLower(after)))) flush(i);
      if (from < 0) from = i;
    } else {
      flush(i);
    }
  }
  flush(text.length);
  return out;
}

/** Words no request or tool is told apart by. */
export const STOP = new Set([
  'a', 'an', 'the', 'to', 'of', 'and', 'or', 'for', 'in', 'on', 'with', 'is', 'it', 'its', 'this', 'that', 'these', 'those',
  'by', 'from', 'at', 'as', 'be', 'are', 'was', 'were', 'been', 'do', 'does', 'did', 'i', 'me', 'my', 'we', 'us', 'our', 'you',
  'your', 'he', 'she', 'they', 'them', 'their', 'there', 'here', 'can', 'could', 'would', 'should', 'will', 'shall', 'may',
  'might', 'must', 'please', 'pls', 'plz', 'just', 'also', 'still', 'so', 'then', 'than', 'too', 'very', 'into', 'onto',
  'about', 'if', 'else', 'have', 'has', 'had', 'having', 'let', 'lets', 'im', 'ive', 'id', 'hey', 'hi', 'thanks', 'thx',
  'quick', 'quickly', 'real', 'actually', 'right', 'some', 'any', 'anything', 'something', 'need', 'needs', 'want', 'wanna',
  'gonna', 'like', 'kind', 'sort', 'bit', 'one', 'ones', 'thing', 'things', 'stuff', 'again', 'currently', 'now', 'today',
  'up', 'out', 'over', 'off', 'yet', 'ok', 'okay', 'which', 'what', 'whats', 'who', 'whom', 'whose', 'where', 'when', 'why',
  'how', 'all', 'every', 'each', 'get', 'got', 'give', 'tell', 'know', 'see', 'show', 'find', 'look', 'go', 'make', 'sure',
  'e', 'g', 'eg', 'ie', 'etc', 'via', 'per', 'not', 'no', 'yes', 'optional', 'optionally', 'default', 'defaults',
]);

/** Words the stemmer leaves alone: cutting them would join them to unrelated words. */
const KEEP = new Set(['string', 'thing', 'something', 'anything', 'nothing', 'everything', 'morning', 'evening', 'during', 'ping', 'ring', 'bring', 'king', 'status', 'news', 'alias', 'canvas', 'analysis', 'https', 'kubernetes', 'series', 'species', 'always', 'sms', 'dns', 'aws', 'gcs', 'ses', 'sqs', 'sns', 'ecs', 'eks', 'iops', 'mcp']);

const VOWELS = new Set(['a', 'e', 'i', 'o', 'u']);
const UNDOUBLE = (w: string) => {
  const n = w.length;
  if (n < 3 || w[n - 1] !== w[n - 2]) return w;
  const c = w[n - 1]!;
  return VOWELS.has(c) || c === 'l' || c === 's' || c === 'z' ? w : w.slice(0, -1);
};

/**
 * A light English stemmer: plurals (`policies` → `policy`, `patches` → `patch`), `-ing` and
 * `-ed` (`merging`, `merged` → `merg`, `stopped` → `stop`) and a final `e` (`merge` → `merg`).
 * Not Porter: it never joins words Porter would keep apart for a tool catalog's vocabulary.
 */
export function stem(word: string): string {
  if (word.length <= 3 || KEEP.has(word)) return word;
  let w = word;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ss') || w.endsWith('us') || w.endsWith('is')) {
    // `status`, `class`, `analysis`: not plurals.
  } else if (w.endsWith('xes') || w.endsWith('ches') || w.endsWith('shes') || w.endsWith('zzes')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length >= 6 && !KEEP.has(w)) w = UNDOUBLE(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length >= 5 && !w.endsWith('eed')) w = UNDOUBLE(w.slice(0, -2));
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

/** The stemmed, stop-word-free terms of a text. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) if (w.length > 1 && !STOP.has(w)) out.push(stem(w));
  return out;
}

/**
 * Splits a glued identifier (`listpullrequests`: ids are lower-cased, so `listPullRequests`
 * arrives without its capitals) into known words, as few as possible; a stretch no known word
 * covers stays a piece of its own at a cost (`unarchivedocument` → `un archive document`).
 * Undefined when no split has at least two known words of three letters or more. Quadratic in
 * the word's length, which is short.
 */
export function segment(word: string, known: (w: string) => boolean): string[] | undefined {
  const n = word.length;
  if (n < 5 || n > 80) return undefined;
  const best: number[] = new Array<number>(n + 1).fill(Number.POSITIVE_INFINITY);
  const from: number[] = new Array<number>(n + 1).fill(-1);
  best[0] = 0;
  for (let end = 1; end <= n; end++) {
    for (let start = Math.max(0, end - 24); start < end; start++) {
      const piece = word.slice(start, end);
      const cost = piece.length >= 2 && known(piece) ? 1 : 3 + piece.length;
      if (best[start]! + cost < best[end]!) {
        best[end] = best[start]! + cost;
        from[end] = start;
      }
    }
  }
  const parts: string[] = [];
  for (let end = n; end > 0; end = from[end]!) parts.unshift(word.slice(from[end]!, end));
  const knownParts = parts.filter((p) => p.length >= 3 && known(p)).length;
  return parts.length >= 2 && knownParts >= 2 ? parts : undefined;
}
