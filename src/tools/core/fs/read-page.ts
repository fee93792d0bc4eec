/**
 * One page of a text file with line numbers (pure). Paging follows reference C4: a 1-based
 * `offset`, an optional `limit`, a page ends at a line cap or a character budget, whichever
 * comes first, and the notice says exactly which offset continues.
 */
export interface PageOptions {
  /** 1-based first line; default 1. */
  offset?: number | undefined;
  /** Lines wanted; default and ceiling `maxLines`. */
  limit?: number | undefined;
  maxLines: number;
  /** Budget for the numbered lines of one page, in characters. */
  maxChars: number;
  /** Longer lines are cut with a marker so one line cannot eat the page. */
  maxLineChars: number;
  /** The argument name the notices tell the model to use (`offset` for read, `from` for memory_get). */
  offsetParam?: string;
}

export interface Page {
  /** Numbered lines (`cat -n` style: right-aligned number, tab, text). */
  body: string;
  /** Trusted continuation notice, or undefined when the page reaches the end. */
  notice: string | undefined;
  firstLine: number;
  /** 0 when nothing was shown. */
  lastLine: number;
  totalLines: number;
  truncatedLines: number;
}

/** Splits file text into lines: `\n` separates, a final newline does not start a new line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

export function numberLine(n: number, line: string): string {
  return `${String(n).padStart(6)}\t${line}`;
}

export function paginate(lines: readonly string[], options: PageOptions): Page {
  const total = lines.length;
  const param = options.offsetParam ?? 'offset';
  const first = Math.max(1, Math.floor(options.offset ?? 1));
  const wanted = Math.min(options.maxLines, Math.max(1, Math.floor(options.limit ?? options.maxLines)));
  if (first > total) {
    const notice = total === 0 ? '[The file is empty.]' : `[${param}=${first} is past the end of the file (${total} lines). Use ${param} from 1 to ${total}.]`;
    return { body: '', notice, firstLine: first, lastLine: 0, totalLines: total, truncatedLines: 0 };
  }

  const out: string[] = [];
  let used = 0;
  let truncatedLines = 0;
  let stoppedByBudget = false;
  let n = first;
  for (; n <= total && n - first < wanted; n++) {
    let line = lines[n - 1]!;
    if (line.length > options.maxLineChars) {
      line = `${line.slice(0, options.maxLineChars)}… [line cut: ${line.length} characters]`;
      truncatedLines++;
    }
    const formatted = numberLine(n, line);
    // The first line of a page is always shown, so paging can never get stuck.
    if (out.length > 0 && used + formatted.length + 1 > options.maxChars) {
      stoppedByBudget = true;
      break;
    }
    out.push(formatted);
    used += formatted.length + 1;
  }
  const last = n - 1;
  let notice: string | undefined;
  if (last < total) {
    const userLimited = options.limit !== undefined && !stoppedByBudget && last - first + 1 === wanted && wanted < options.maxLines;
    notice = userLimited
      ? `[${total - last} more lines in file. Use ${param}=${last + 1} to continue.]`
      : `[Showing lines ${first}-${last} of ${total}${stoppedByBudget ? ` (${options.maxChars}-character page limit)` : ''}. Use ${param}=${last + 1} to continue.]`;
  }
  if (truncatedLines > 0) {
    const cut = `[${truncatedLines} line(s) longer than ${options.maxLineChars} characters were cut; use exec (e.g. cut -c) to see them whole.]`;
    notice = notice ? `${notice}\n${cut}` : cut;
  }
  return { body: out.join('\n'), notice, firstLine: first, lastLine: last, totalLines: total, truncatedLines };
}
