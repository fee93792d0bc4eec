/**
 * Applies the chunks of one `*** Update File` to a file's text (reference C7), pure.
 * Each chunk's `@@` context line is found first (searching forward), then its old lines with
 * four passes of decreasing strictness: exact, trailing whitespace ignored, surrounding
 * whitespace ignored, and Unicode punctuation folded. `*** End of File` anchors the search at
 * the end. The result always ends with a newline.
 */
import type { UpdateChunk } from './apply-patch-parse.js';

export type UpdateOutcome = { ok: true; content: string } | { ok: false; message: string };

function foldPunctuation(s: string): string {
  return s
    .trim()
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, ' ');
}

const PASSES: Array<(s: string) => string> = [(s) => s, (s) => s.trimEnd(), (s) => s.trim(), foldPunctuation];

/**
 * Index where `pattern` occurs in `lines` at or after `start`, or -1. Each pass normalises every
 * line once and searches with Knuth–Morris–Pratt, so a pass is linear in file plus pattern: both
 * are the model's (a file of repeated lines and a long near-miss block would otherwise cost
 * lines × pattern comparisons, minutes for a few hundred kilobytes).
 */
export function seekSequence(lines: readonly string[], pattern: readonly string[], start: number, atEnd: boolean): number {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return -1;
  const from = atEnd ? lines.length - pattern.length : start;
  for (const norm of PASSES) {
    const found = indexOfSequence(lines.slice(from).map(norm), pattern.map(norm));
    if (found >= 0) return from + found;
  }
  return -1;
}

function indexOfSequence(haystack: readonly string[], needle: readonly string[]): number {
  // fail[k]: length of the longest proper prefix of needle[0..k] that is also its suffix.
  const fail = new Array<number>(needle.length).fill(0);
  for (let k = 1, len = 0; k < needle.length; ) {
    if (needle[k] === needle[len]) fail[k++] = ++len;
    else if (len > 0) len = fail[len - 1]!;
    else fail[k++] = 0;
  }
  for (let i = 0, j = 0; i < haystack.length; ) {
    if (haystack[i] === needle[j]) {
      i++;
      j++;
      if (j === needle.length) return i - j;
    } else if (j > 0) j = fail[j - 1]!;
    else i++;
  }
  return -1;
}

export function applyUpdateChunks(original: string, chunks: readonly UpdateChunk[], label: string): UpdateOutcome {
  const lines = original.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const replacements: Array<{ start: number; remove: number; insert: string[] }> = [];
  let cursor = 0;
  for (const chunk of chunks) {
    if (chunk.changeContext !== undefined) {
      const at = seekSequence(lines, [chunk.changeContext], cursor, false);
      if (at < 0) return { ok: false, message: `Failed to find context '${chunk.changeContext}' in ${label}` };
      cursor = at + 1;
    }
    if (chunk.oldLines.length === 0) {
      // A pure insertion goes right after its context line, or at the end of the file.
      replacements.push({ start: chunk.changeContext !== undefined ? cursor : lines.length, remove: 0, insert: chunk.newLines });
      continue;
    }
    let pattern = chunk.oldLines;
    let insert = chunk.newLines;
    let at = seekSequence(lines, pattern, cursor, chunk.isEndOfFile);
    if (at < 0 && pattern[pattern.length - 1] === '') {
      // A trailing blank context line often stands for the file's final newline.
      pattern = pattern.slice(0, -1);
      if (insert[insert.length - 1] === '') insert = insert.slice(0, -1);
      at = seekSequence(lines, pattern, cursor, chunk.isEndOfFile);
    }
    if (at < 0) return { ok: false, message: `Failed to find expected lines in ${label}:\n${chunk.oldLines.join('\n')}` };
    replacements.push({ start: at, remove: pattern.length, insert });
    cursor = at + pattern.length;
  }
  replacements.sort((a, b) => a.start - b.start);
  for (const r of [...replacements].reverse()) lines.splice(r.start, r.remove, ...r.insert);
  return { ok: true, content: `${lines.join('\n')}\n` };
}
