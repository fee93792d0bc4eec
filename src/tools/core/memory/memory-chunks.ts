/**
 * Splits a markdown memory file into search chunks (pure). A chunk never crosses a heading;
 * inside a section, paragraphs are grouped up to `maxChars`, and a paragraph longer than that
 * is cut at line boundaries. Each chunk remembers its heading so section titles help ranking,
 * and its line range so memory_get can fetch around a hit.
 */
export interface MemoryChunk {
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  heading: string;
  text: string;
}

const HEADING_MARK = /^\s{0,3}#{1,6}\s+/;

/**
 * A Markdown heading's text, as `/^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/` reads it: the closing `#`s
 * and blanks are taken off from the end, where that pattern would retry the rest of a long line
 * from each of its characters. A line break left in the text (`.` stops there) is no heading.
 */
export function headingOf(line: string): string | undefined {
  const mark = HEADING_MARK.exec(line);
  if (!mark) return undefined;
  let text = line.slice(mark[0].length).trimEnd();
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end--;
  text = text.slice(0, end).trimEnd();
  return /[\n\r\u2028\u2029]/.test(text) ? undefined : text;
}

export function chunkMarkdown(content: string, maxChars = 800): MemoryChunk[] {
  const lines = content.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines[lines.length - 1] === '') lines.pop();
  const chunks: MemoryChunk[] = [];
  let heading = '';
  let current: { start: number; end: number; lines: string[] } | undefined;

  const flush = () => {
    if (current && current.lines.some((l) => l.trim() !== '')) {
      chunks.push({ startLine: current.start, endLine: current.end, heading, text: current.lines.join('\n').trim() });
    }
    current = undefined;
  };
  const size = () => (current ? current.lines.reduce((n, l) => n + l.length + 1, 0) : 0);

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const n = i + 1;
    const h = headingOf(line);
    if (h !== undefined) {
      flush();
      heading = h;
      current = { start: n, end: n, lines: [line] };
      continue;
    }
    const blank = line.trim() === '';
    // A paragraph boundary closes the chunk once it is big enough; a huge paragraph is cut anywhere.
    if (current && ((blank && size() >= maxChars / 2) || size() + line.length + 1 > maxChars)) flush();
    if (!current) {
      if (blank) continue;
      current = { start: n, end: n, lines: [] };
    }
    current.lines.push(line);
    if (!blank) current.end = n;
  }
  flush();
  return chunks;
}
