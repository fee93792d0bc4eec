/**
 * The model's Markdown as Slack mrkdwn. Slack reads `*bold*`, `_italic_`, `~strike~`,
 * `<url|text>` links, backtick code and fenced blocks, and nothing else: headings become bold
 * lines, list markers bullets, tables (which mrkdwn lacks) a code block so their columns line
 * up. `&`, `<` and `>` are escaped everywhere, as Slack requires, which also keeps model text
 * from writing `<!channel>`, `<!here>` or a link of its own; only user and channel mentions (`<@U…>`, `<#C…>`) pass.
 * Links keep http(s) and mailto targets; any other scheme is shown as text.
 */
export function toMrkdwn(markdown: string): string {
  // Text no rule below reacts to is its own mrkdwn: most chat replies, converted without
  // splitting them into lines and running every pattern on each.
  return hasMarkup(markdown) ? convert(markdown) : markdown;
}

/** The whole conversion, every line through every rule (exported for the fast path's test). */
export function convert(markdown: string): string {
  const out: string[] = [];
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      // A fenced block: its language tag dropped, its text only escaped.
      const body: string[] = [];
      let j = i + 1;
      while (j < lines.length && !lines[j]!.trimStart().startsWith(fence[1]!)) body.push(lines[j++]!);
      out.push('```', ...body.map(escape), ...(j < lines.length ? ['```'] : []));
      i = j;
      continue;
    }
    if (isTableRow(line) && i + 1 < lines.length && isTableSeparator(lines[i + 1]!)) {
      const rows: string[][] = [cells(line)];
      let j = i + 2;
      while (j < lines.length && isTableRow(lines[j]!)) rows.push(cells(lines[j++]!));
      out.push('```', ...alignTable(rows).map(escape), '```');
      i = j - 1;
      continue;
    }
    out.push(convertLine(line));
  }
  return out.join('\n');
}

/**
 * Whether any rule of `convert` could change the text, in one pass. Anywhere: line ends (`\r`),
 * code, `*` emphasis, escapes (`&`, `<`, `>`, which also start quotes and links), tables, links
 * and the two placeholders the conversion marks with internally; `~~` and `__` (strike, strong,
 * a `~~~` fence). At a line's start, after blanks: `-`, `+`, `#`, `_` (list items, rules,
 * headings). A `-` or `_` inside a line ("re-run", "file_name") changes nothing, so such text
 * is returned as it is. Unsure is "yes": a line starting with a character beyond ASCII (it may
 * be a Unicode space before a marker) takes the whole conversion.
 */
export function hasMarkup(text: string): boolean {
  let lineStart = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (lineStart) {
      // Blanks keep the line's start open: `  - item` is a list item.
      if (c === 0x20 || c === 0x09 || c === 0x0b || c === 0x0c) continue;
      lineStart = false;
      if (c === 0x2d || c === 0x2b || c === 0x23 || c === 0x5f || c >= 0x80) return true;
    }
    switch (c) {
      case 0x0a:
        lineStart = true;
        break;
      case 0x0d:
      case 0x60: // `
      case 0x2a: // *
      case 0x26: // &
      case 0x3c: // <
      case 0x3e: // >
      case 0x7c: // |
      case 0x5b: // [
      case 0x00:
      case 0x01:
        return true;
      case 0x7e: // ~
      case 0x5f: // _
        if (text.charCodeAt(i + 1) === c) return true;
        break;
    }
  }
  return false;
}

function convertLine(line: string): string {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return heading[1] ? `*${inline(stripEmphasis(heading[1]))}*` : '';
  const bullet = /^(\s*)[-*+]\s+(\[[ xX]\]\s+)?(.*)$/.exec(line);
  if (bullet) {
    const depth = Math.floor(bullet[1]!.replace(/\t/g, '  ').length / 2);
    const box = bullet[2] ? (/x/i.test(bullet[2]) ? '☑ ' : '☐ ') : '';
    return `${'    '.repeat(depth)}• ${box}${inline(bullet[3]!)}`;
  }
  if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) return '──────────';
  const quote = /^\s{0,3}>\s?(.*)$/.exec(line);
  if (quote) return `&gt; ${inline(quote[1]!)}`;
  return inline(line);
}

/** `**x**` inside a heading would double the bold. */
const stripEmphasis = (s: string) => s.replace(/\*\*(.+?)\*\*/g, '$1').replace(/__(.+?)__/g, '$1');

/** Inline Markdown of one line: code spans are kept apart and only escaped. */
function inline(text: string): string {
  const parts = text.split(/(`+[^`]*?`+)/);
  return parts.map((part, i) => (i % 2 === 1 && /^`+[^`]*`+$/.test(part) ? escape(part) : spans(part))).join('');
}

const USER_MENTION = /<@[UW][A-Z0-9]{2,}>|<#C[A-Z0-9]{2,}(?:\|[^<>|\n]*)?>/g;

function spans(text: string): string {
  // Links first, from the raw text, so their parts are escaped separately.
  const pieces: string[] = [];
  const link = /\[([^\]\n]+)\]\(\s*(?:<([^>\n]+)>|([^)\s]+))(?:\s+"[^"]*")?\s*\)|<(https?:\/\/[^>\s]+)>/g;
  let last = 0;
  for (let m = link.exec(text); m; m = link.exec(text)) {
    pieces.push(emphasis(escapeKeepingMentions(text.slice(last, m.index))));
    const label = m[1] ?? m[4]!;
    const url = m[2] ?? m[3] ?? m[4]!;
    pieces.push(safeUrl(url) ? `<${escapeUrl(url)}|${emphasis(escape(label)).replace(/\|/g, '¦')}>` : emphasis(escape(m[0])));
    last = m.index + m[0].length;
  }
  pieces.push(emphasis(escapeKeepingMentions(text.slice(last))));
  return pieces.join('');
}

function emphasis(text: string): string {
  return text
    .replace(/\*\*\*(?=\S)(.+?)(?<=\S)\*\*\*/g, '\u0000B_$1_\u0000B')
    .replace(/(?<![*\w])\*\*(?=\S)(.+?)(?<=\S)\*\*(?![*\w])/g, '\u0000B$1\u0000B')
    .replace(/(?<![_\w])__(?=\S)(.+?)(?<=\S)__(?![_\w])/g, '\u0000B$1\u0000B')
    .replace(/(?<![*\w])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![*\w])/g, '_$1_')
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, '~$1~')
    .replace(/\u0000B/g, '*');
}

function safeUrl(url: string): boolean {
  try {
    return ['http:', 'https:', 'mailto:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

/** A URL inside `<…|…>`: `|` and `>` would end it early. */
const escapeUrl = (url: string) => url.replace(/&/g, '&amp;').replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C');

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function escapeKeepingMentions(text: string): string {
  const kept: string[] = [];
  const marked = text.replace(USER_MENTION, (m) => `\u0001${kept.push(m) - 1}\u0001`);
  return escape(marked).replace(/\u0001(\d+)\u0001/g, (_, n: string) => kept[Number(n)]!);
}

const isTableRow = (line: string) => /^\s*\|.*\|\s*$/.test(line) || (/\S\s*\|\s*\S/.test(line) && line.includes('|') && !line.includes('`'));
const isTableSeparator = (line: string) => /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line);

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((c) => c.trim().replace(/\*\*(.+?)\*\*/g, '$1').replace(/`([^`]*)`/g, '$1'));
}

function alignTable(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, [...c].length)));
  const line = (row: string[]) => widths.map((w, i) => (row[i] ?? '').padEnd(w)).join(' | ').trimEnd();
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('-+-'), ...rows.slice(1).map(line)];
}
