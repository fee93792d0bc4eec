/**
 * Exact-text replacement for the `edit` tool (pure). Follows reference C6 except that matching
 * is exact only: a near match is reported as a hint instead of being applied, so the model
 * always changes precisely the text it named.
 *
 * - A leading BOM is kept aside and restored; the file's line ending (first of CRLF/LF) is
 *   detected, matching happens on LF text, and the result gets the original ending back.
 * - Every `oldText` is matched against the original content, not after earlier edits.
 * - 0 matches, more than one match without `replaceAll`, overlapping edits and a result equal
 *   to the input are errors that say what to do next.
 */
export interface EditSpec {
  oldText: string;
  newText: string;
  /** Replace every occurrence instead of requiring exactly one. */
  replaceAll?: boolean | undefined;
}

export type EditOutcome =
  | { ok: true; content: string; replacements: number; firstChangedLine: number }
  | { ok: false; message: string };

interface Range {
  start: number;
  end: number;
  text: string;
  edit: number;
}

const LINE_NUMBER_PREFIX = /^\s*\d+\t/;
const MAX_HINT_COMPARISONS = 2_000_000;

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

/** The loose form used only for hints: Unicode-folded, quotes and dashes plain, spaces collapsed. */
function loose(s: string): string {
  return s
    .normalize('NFKC')
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Line numbers where `needle` matches `content` loosely (for the not-found hint). */
function looseMatches(content: string, needle: string): number[] {
  const lines = content.split('\n').map(loose);
  const want = needle.split('\n').map(loose);
  while (want.length > 1 && want[want.length - 1] === '') want.pop();
  const hits: number[] = [];
  // Only a hint: a long block against a long file would cost lines × block comparisons.
  if (want.length * lines.length > MAX_HINT_COMPARISONS) return hits;
  for (let i = 0; i + want.length <= lines.length; i++) {
    const ok = want.every((w, j) => {
      const l = lines[i + j]!;
      if (want.length === 1) return w !== '' && l.includes(w);
      if (j === 0) return l.endsWith(w);
      if (j === want.length - 1) return l.startsWith(w);
      return l === w;
    });
    if (ok) hits.push(i + 1);
  }
  return hits;
}

function notFoundHint(content: string, needle: string): string {
  const needleLines = needle.split('\n');
  if (needleLines.filter((l) => l !== '').every((l) => LINE_NUMBER_PREFIX.test(l))) {
    return 'oldText seems to include the line-number prefixes of read output; leave out the number and the tab before each line.';
  }
  const near = looseMatches(content, needle);
  if (near.length > 0) {
    return `A match that differs only in whitespace, quotes or dashes starts at line ${near.slice(0, 5).join(', ')}; copy the text exactly as read shows it.`;
  }
  const first = loose(needleLines.find((l) => l.trim() !== '') ?? '');
  const firstHits = first === '' ? [] : content.split('\n').flatMap((l, i) => (loose(l).includes(first) ? [i + 1] : []));
  if (firstHits.length > 0) {
    return `Its first line appears at line ${firstHits.slice(0, 5).join(', ')}, but the lines after it differ; read the file again and copy the current text.`;
  }
  return 'The file may have changed; read it again and copy the current text.';
}

export function applyEdits(original: string, edits: readonly EditSpec[], label: string): EditOutcome {
  if (edits.length === 0) return { ok: false, message: 'no edits given; pass edits: [{oldText, newText}]' };
  const bom = original.startsWith('\uFEFF') ? '\uFEFF' : '';
  const body = original.slice(bom.length);
  const firstBreak = body.indexOf('\n');
  const crlf = firstBreak > 0 && body[firstBreak - 1] === '\r';
  const content = crlf ? body.replace(/\r\n/g, '\n') : body;

  const ranges: Range[] = [];
  for (const [i, edit] of edits.entries()) {
    const which = edits.length > 1 ? `edits[${i}].oldText` : 'oldText';
    if (typeof edit.oldText !== 'string' || edit.oldText === '') return { ok: false, message: `${which} is empty; name the exact text to replace` };
    if (typeof edit.newText !== 'string') return { ok: false, message: `${which.replace('oldText', 'newText')} must be a string` };
    const needle = edit.oldText.replace(/\r\n/g, '\n');
    const replacement = edit.newText.replace(/\r\n/g, '\n');
    const hits = occurrences(content, needle);
    if (hits.length === 0) return { ok: false, message: `Could not find ${which} in ${label}. ${notFoundHint(content, needle)}` };
    if (hits.length > 1 && !edit.replaceAll) {
      const lines = hits.slice(0, 10).map((h) => lineOf(content, h));
      return {
        ok: false,
        message: `Found ${hits.length} occurrences of ${which} in ${label} (lines ${lines.join(', ')}${hits.length > 10 ? ', …' : ''}); it must be unique. Include more surrounding lines to pick one, or set replaceAll: true to replace them all.`,
      };
    }
    for (const start of hits) ranges.push({ start, end: start + needle.length, text: replacement, edit: i });
  }

  ranges.sort((a, b) => a.start - b.start);
  for (let i = 1; i < ranges.length; i++) {
    const prev = ranges[i - 1]!;
    const cur = ranges[i]!;
    if (cur.start < prev.end) {
      return { ok: false, message: `edits[${prev.edit}] and edits[${cur.edit}] overlap in ${label} (line ${lineOf(content, cur.start)}); merge them into one edit.` };
    }
  }

  let next = content;
  for (const r of [...ranges].reverse()) next = next.slice(0, r.start) + r.text + next.slice(r.end);
  if (next === content) return { ok: false, message: `No changes made to ${label}: the replacement text is identical to the original.` };
  const restored = bom + (crlf ? next.replace(/\n/g, '\r\n') : next);
  return { ok: true, content: restored, replacements: ranges.length, firstChangedLine: lineOf(content, ranges[0]!.start) };
}
