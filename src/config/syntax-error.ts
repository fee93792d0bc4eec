/**
 * A malformed config file as its author needs to see it: the line and column where the fix
 * goes, the line itself with the one before it, and a caret under the column. The parsers'
 * own positions are kept, except for YAML's most common slip — a line indented under a
 * `key: value` that already has its value — which `yaml` reports on the line above (twice); there
 * the stray line is the one named.
 */
export interface SyntaxPosition {
  /** 1-based. */
  line: number;
  /** 1-based. */
  col: number;
}

/** The line before, the line, and a caret under `col`, each prefixed with its number. */
export function snippet(text: string, at: SyntaxPosition): string {
  const lines = text.split(/\r?\n/);
  const width = String(at.line).length;
  const row = (n: number) => `    ${String(n).padStart(width)} | ${lines[n - 1] ?? ''}`;
  const out = [];
  if (at.line > 1) out.push(row(at.line - 1));
  out.push(row(at.line));
  out.push(`    ${' '.repeat(width)} | ${' '.repeat(Math.max(0, at.col - 1))}^`);
  return out.join('\n');
}

const indentOf = (line: string) => line.length - line.trimStart().length;
const isBlankOrComment = (line: string) => line.trim() === '' || line.trimStart().startsWith('#');
/** `key: value` with the value on the same line (so nothing may be nested under it). */
function hasInlineValue(line: string): boolean {
  const t = line.trim();
  if (t.startsWith('#') || t.startsWith('- ')) return false;
  const colon = t.indexOf(': ');
  return colon > 0 && t.slice(colon + 2).trim() !== '' && !t.slice(colon + 2).trim().startsWith('#');
}

/**
 * Where a YAML error really is: when the reported line has an inline value and the next content
 * line is indented deeper, that next line is the mistake.
 */
export function yamlErrorAt(text: string, reported: SyntaxPosition): { at: SyntaxPosition; strayIndent?: string } {
  const lines = text.split(/\r?\n/);
  // `yaml` may point at a comment or blank line before the stray one: judge from the content line above.
  let line = reported.line;
  while (line > 1 && lines[line - 1] !== undefined && isBlankOrComment(lines[line - 1]!)) line--;
  const here = lines[line - 1];
  if (here === undefined || !hasInlineValue(here)) return { at: reported };
  let next = line + 1;
  while (next <= lines.length && isBlankOrComment(lines[next - 1]!)) next++;
  const stray = lines[next - 1];
  if (stray === undefined || indentOf(stray) <= indentOf(here)) return { at: reported };
  return { at: { line: next, col: indentOf(stray) + 1 }, strayIndent: here.trim() };
}

/** One problem message per place for a YAML file's errors (`yaml` may report one slip twice). */
export function yamlProblemMessages(text: string, errors: ReadonlyArray<{ message: string; linePos?: [SyntaxPosition, ...SyntaxPosition[]] | undefined }>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const e of errors) {
    const reason = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    const reported = e.linePos?.[0];
    if (!reported) {
      out.push(`malformed YAML: ${reason}`);
      continue;
    }
    const { at, strayIndent } = yamlErrorAt(text, reported);
    const key = `${at.line}:${at.col}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const what = strayIndent !== undefined ? `this line is indented under "${strayIndent}", which already has a value; indent it like the keys beside that one` : reason;
    out.push(`malformed YAML at line ${at.line}, column ${at.col}: ${what}\n${snippet(text, at)}`);
  }
  return out;
}

/** The JSON5 parser's error (`JSON5: invalid character 'c' at 5:21`) with the place shown. */
export function json5ProblemMessage(text: string, err: Error & { lineNumber?: number; columnNumber?: number }): string {
  const reason = err.message.replace(/^JSON5: /, '').replace(/ at \d+:\d+$/, '');
  if (!err.lineNumber || !err.columnNumber) return `malformed JSON5: ${reason}`;
  const at = { line: err.lineNumber, col: err.columnNumber };
  return `malformed JSON5 at line ${at.line}, column ${at.col}: ${reason}\n${snippet(text, at)}`;
}
