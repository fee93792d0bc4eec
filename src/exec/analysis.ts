/**
 * The restricted POSIX shell analysis (reference A7, the hand-written analyzer of OpenClaw
 * 2026.6.8). It reads only chains (`&&`, `||`, `;`), pipelines, quoting, comments and heredocs;
 * everything else a shell could do (substitution, redirection, subshells, background jobs,
 * multi-line scripts) makes the command unanalyzable, which callers treat as an allowlist miss.
 * Pure: no I/O.
 */
import { isEcmaSpace } from '../util/ecma-space.js';

export type ChainOperator = '&&' | '||' | ';';

export interface ShellSegment {
  /** The segment's source text (heredoc bodies excluded). */
  raw: string;
  /** Tokens after quote removal (A7.5). */
  argv: string[];
  /** Heredocs feeding this segment, in the order sh reads their bodies. */
  heredocs: SegmentHeredoc[];
}

/**
 * A heredoc as sh reads it: the operator as written and the body lines that follow the command
 * line (terminator included). The enforced rewrite re-emits exactly these, so a command that
 * needs its heredoc never has to run as raw text.
 */
export interface SegmentHeredoc {
  /** Operator source text, e.g. `<<'EOF'` or `<<- EOF`. */
  operator: string;
  /** argv tokens the operator became (from `argvStart`, `argvCount` of them); -1 when it shares a token with other text. */
  argvStart: number;
  argvCount: number;
  /** Body lines and the terminator line, each ending in `\n`. */
  body: string;
}

export interface ShellChainPart {
  /** The operator joining this part to the previous one; null for the first part. */
  op: ChainOperator | null;
  /** One or more segments joined by `|`. */
  pipeline: ShellSegment[];
}

export type ShellAnalysis =
  | { ok: true; parts: ShellChainPart[]; hasHeredoc: boolean }
  | { ok: false; reason: string; /** Set when the command has more segments than `maxSegments` allowed. */ tooManySegments?: true };

const HEREDOC_MAX_LINES = 1024;
const HEREDOC_MAX_LINE_CHARS = 65_536;

/**
 * `maxSegments` bounds the work: past that many pipeline segments (over the whole chain) the
 * analysis stops and says so, before tokenizing the rest.
 */
export function analyzeShellCommand(command: string, options: { maxSegments?: number } = {}): ShellAnalysis {
  // No shell argument can carry a NUL; a command with one would not run as it was judged.
  if (command.includes('\0')) return fail('NUL byte in the command');
  if (/\\(\r\n|\n|\r)/.test(command)) return fail('line continuation (backslash-newline)');
  const chain = splitChain(command);
  const sources: Array<{ op: ChainOperator | null; text: string }> = chain ?? [{ op: null, text: command }];
  const parts: ShellChainPart[] = [];
  let hasHeredoc = false;
  let segmentsLeft = options.maxSegments ?? Infinity;
  if (sources.length > segmentsLeft) return { ok: false, reason: `more than ${segmentsLeft} commands`, tooManySegments: true };
  for (const source of sources) {
    const pipeline = splitPipeline(source.text);
    if (!pipeline.ok) return pipeline;
    segmentsLeft -= pipeline.segments.length;
    if (segmentsLeft < 0) return { ok: false, reason: `more than ${options.maxSegments} commands`, tooManySegments: true };
    hasHeredoc ||= pipeline.hasHeredoc;
    const segments: ShellSegment[] = [];
    let next = 0; // heredocs come in segment order
    for (const [index, raw] of pipeline.segments.entries()) {
      const tokens = tokenizeShellArgs(raw);
      if (tokens === null) return fail('unterminated shell quote/escape');
      if (tokens.argv.length === 0) return fail('empty command segment');
      const found: FoundHeredoc[] = [];
      while (next < pipeline.heredocs.length && pipeline.heredocs[next]!.segment === index) found.push(pipeline.heredocs[next++]!);
      segments.push({ raw: raw.trim(), argv: tokens.argv, heredocs: placeHeredocs(found, tokens) });
    }
    parts.push({ op: source.op, pipeline: segments });
  }
  if (parts.length === 0) return fail('empty command');
  return { ok: true, parts, hasHeredoc };
}

const fail = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

/**
 * A7.2: splits at `&&`, `||`, `;` outside quotes. Returns null when the text is not a chain, or
 * when the chain is malformed (an empty part); the pipeline splitter then sees the whole text
 * and rejects what it cannot read.
 */
export function splitChain(command: string): Array<{ op: ChainOperator | null; text: string }> | null {
  const parts: Array<{ op: ChainOperator | null; text: string }> = [];
  let op: ChainOperator | null = null;
  let start = 0;
  let quote: '"' | "'" | null = null;
  let found = false;
  // The character a backslash escaped: an escaped blank does not end a word (`a\ #` is `a #`).
  let escaped = -1;
  let i = 0;
  for (; i < command.length; i++) {
    const c = command[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      continue;
    }
    if (quote === '"') {
      if (c === '\\' && i + 1 < command.length) {
        const next = command[i + 1]!;
        if (next === '\n' || next === '\r') return null;
        if ('\\"$`'.includes(next)) i++;
        continue;
      }
      if (c === '"') quote = null;
      continue;
    }
    if (c === '\\') {
      escaped = ++i;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      continue;
    }
    if (c === '#' && (i === 0 || (isWordSeparator(command[i - 1]!) && escaped !== i - 1))) break;
    let matched: ChainOperator | null = null;
    if ((c === '&' || c === '|') && command[i + 1] === c) matched = c === '&' ? '&&' : '||';
    else if (c === ';') matched = ';';
    if (matched) {
      found = true;
      parts.push({ op, text: command.slice(start, i) });
      op = matched;
      i += matched.length - 1;
      start = i + 1;
    }
  }
  if (!found) return null;
  // Whatever follows a comment start belongs to the last part; the pipeline splitter drops it.
  parts.push({ op, text: command.slice(start) });
  if (parts.some((p) => isBlank(p.text, 0, p.text.length))) return null;
  return parts;
}

interface PendingHeredoc {
  delimiter: string;
  quoted: boolean;
  stripTabs: boolean;
}

/** A heredoc found by the pipeline splitter: which segment, where its operator sits, its body. */
interface FoundHeredoc {
  segment: number;
  operator: string;
  /** Offsets of the operator in the segment's source text. */
  start: number;
  end: number;
  body: string;
}

type PipelineSplit = { ok: true; segments: string[]; hasHeredoc: boolean; heredocs: FoundHeredoc[] } | { ok: false; reason: string };

/**
 * Finds the argv tokens each operator became; a token reaching outside the operator text makes
 * it unplaceable. Operators and tokens are both in source order, so one pass over each.
 */
function placeHeredocs(found: readonly FoundHeredoc[], tokens: Tokens): SegmentHeredoc[] {
  const placed: SegmentHeredoc[] = [];
  let k = 0;
  for (const doc of found) {
    while (k < tokens.starts.length && tokens.starts[k]! < doc.start) k++;
    const first = k;
    while (k < tokens.starts.length && tokens.starts[k]! < doc.end) k++;
    const exact = k > first && tokens.starts[first] === doc.start && tokens.ends[k - 1] === doc.end;
    placed.push({ operator: doc.operator, argvStart: exact ? first : -1, argvCount: exact ? k - first : 0, body: doc.body });
  }
  return placed;
}

/** A7.3 + A7.4: splits one chain part into pipeline segments, rejecting everything else. */
export function splitPipeline(text: string): PipelineSplit {
  const segments: string[] = [];
  // The current segment is text[from, i), sliced once when it ends rather than built up piece by
  // piece: a 32 KiB segment of quoted words would be thousands of concatenations. Its text ends
  // early (`end`) at a comment or at the line break before heredoc bodies; nothing follows either.
  let from = 0;
  let end = -1;
  let quote: '"' | "'" | null = null;
  let hasHeredoc = false;
  const pending: Array<PendingHeredoc & { found: FoundHeredoc }> = [];
  const heredocs: FoundHeredoc[] = [];
  // The character a backslash escaped outside quotes: an escaped blank does not end a word.
  let escaped = -1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    if (quote === "'") {
      // Everything up to the closing quote is literal.
      const close = text.indexOf("'", i);
      if (close !== -1) quote = null;
      i = close === -1 ? n : close + 1;
      continue;
    }
    const c = text[i]!;
    if (quote === '"') {
      if (!special(DQ_SPECIAL, text, i)) {
        while (i < n && !special(DQ_SPECIAL, text, i)) i++;
        continue;
      }
      if (c === '\\') {
        const next = text[i + 1];
        if (next === undefined) return fail('unterminated shell quote/escape');
        if (next === '\n' || next === '\r') return fail('line continuation (backslash-newline)');
        i += 2;
        continue;
      }
      if (c === '`') return fail('command substitution (backtick)');
      if (c === '$' && text[i + 1] === '(') return fail('command substitution `$(`');
      if (c === '\n' || c === '\r') return fail('newline inside double quotes');
      if (c === '"') quote = null;
      i++;
      continue;
    }
    // Outside quotes.
    if (!special(PIPELINE_SPECIAL, text, i)) {
      while (i < n && !special(PIPELINE_SPECIAL, text, i)) i++;
      continue;
    }
    if (c === '\\') {
      if (text[i + 1] === undefined) return fail('unterminated shell quote/escape');
      escaped = i + 1;
      i += 2;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      i++;
      continue;
    }
    if (c === '#' && (i === from || (isWordSeparator(text[i - 1] ?? ' ') && escaped !== i - 1))) {
      // A comment runs to the end of the line only: a following line is still a command.
      end = i;
      const eol = nextLineBreak(text, i);
      if (eol === -1) {
        i = n;
        break;
      }
      i = eol;
      continue;
    }
    if (c === '\n' || c === '\r') {
      if (pending.length === 0) return fail('newline between commands');
      if (end === -1) end = i;
      const consumed = consumeHeredocBodies(text, i, pending);
      if (!consumed.ok) return consumed;
      for (let k = 0; k < pending.length; k++) {
        const found = pending[k]!.found;
        found.body = consumed.bodies[k]!;
        heredocs.push(found);
      }
      pending.length = 0;
      i = consumed.next;
      // Nothing may follow the last heredoc body: a further line would be a new command.
      if (!isBlank(text, i, n)) return fail('command after heredoc body');
      i = n;
      break;
    }
    if (c === '|') {
      const next = text[i + 1];
      if (next === '|') return fail('`||` inside a pipeline');
      if (next === '&') return fail('`|&` pipe');
      if (isBlank(text, from, i)) return fail('empty pipeline segment');
      segments.push(text.slice(from, i));
      i++;
      from = i;
      continue;
    }
    if (c === '&') return fail('background job or `&` operator');
    if (c === ';') return fail('`;` where a chain was not readable');
    if (c === '<' && text[i + 1] === '<') {
      if (text[i + 2] === '<') return fail('here-string `<<<`');
      const parsed = parseHeredocOperator(text, i);
      if (!parsed.ok) return parsed;
      const operator = text.slice(i, parsed.end);
      const { delimiter, quoted, stripTabs } = parsed.heredoc;
      const start = i - from;
      pending.push({ delimiter, quoted, stripTabs, found: { segment: segments.length, operator, start, end: start + operator.length, body: '' } });
      hasHeredoc = true;
      i = parsed.end;
      continue;
    }
    if (c === '>' || c === '<') return fail('redirection');
    if (c === '`') return fail('command substitution (backtick)');
    if (c === '(' || c === ')') return fail('subshell or process substitution');
    if (c === '$' && text[i + 1] === '(') return fail('command substitution `$(`');
    // bash decodes `$'\x41'` and translates `$"…"`; dash (sh) keeps the `$`: the argv depends on the shell.
    if (c === '$' && (text[i + 1] === "'" || text[i + 1] === '"')) return fail('`$\'…\'` or `$"…"` quoting (bash and sh read it differently)');
    i++;
  }
  if (quote !== null) return fail('unterminated shell quote/escape');
  if (pending.length > 0) return fail('unterminated heredoc');
  const last = end === -1 ? i : end;
  if (isBlank(text, from, last)) {
    if (segments.length > 0) return fail('empty pipeline segment');
    return fail('empty command');
  }
  segments.push(text.slice(from, last));
  return { ok: true, segments, hasHeredoc, heredocs };
}

/** A lookup table by character code (below 128) for the scanning loops. */
function asciiTable(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (const c of chars) table[c.charCodeAt(0)] = 1;
  return table;
}
/** What the pipeline splitter looks at outside quotes; every other character is copied as it is. */
const PIPELINE_SPECIAL = asciiTable('\\\'"#\n\r|&;<>`()$');
/** What it looks at inside double quotes. */
const DQ_SPECIAL = asciiTable('\\`$\n\r"');
/** What ends a run of plain token characters: quotes, backslash, the shell's blanks. */
const TOKEN_SPECIAL = asciiTable('\\\'" \t\n');

/** Whether the character at `i` is in `table`; characters beyond ASCII never are. */
const special = (table: Uint8Array, text: string, i: number): boolean => {
  const code = text.charCodeAt(i);
  return code < 128 && table[code] === 1;
};

/**
 * What separates words for sh and bash: space, tab and newline, nothing else. A vertical tab,
 * form feed or a Unicode space (U+00A0, U+2003, …) is an ordinary character inside a word:
 * `a<U+00A0>b` is one argument, and a `#` after one starts no comment.
 */
export function isWordSeparator(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\n';
}

/** Whether text[from, to) is empty or holds only what `trim()` removes, without a copy. */
function isBlank(text: string, from: number, to: number): boolean {
  for (let j = from; j < to; j++) if (!isEcmaSpace(text.charCodeAt(j))) return false;
  return true;
}

function nextLineBreak(text: string, from: number): number {
  for (let j = from; j < text.length; j++) if (text[j] === '\n' || text[j] === '\r') return j;
  return -1;
}

function parseHeredocOperator(
  text: string,
  at: number,
): { ok: true; heredoc: PendingHeredoc; end: number } | { ok: false; reason: string } {
  let i = at + 2;
  let stripTabs = false;
  if (text[i] === '-') {
    stripTabs = true;
    i++;
  }
  while (text[i] === ' ' || text[i] === '\t') i++;
  // The delimiter is one whole shell word (`'A'B` is `AB`, as sh reads it): quote removal only.
  let delimiter = '';
  let quoted = false;
  while (i < text.length && !/[\s|&;<>()]/.test(text[i]!)) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      quoted = true;
      const close = c;
      i++;
      while (i < text.length && text[i] !== close) {
        if (close === '"' && text[i] === '\\' && i + 1 < text.length && '\\"$`'.includes(text[i + 1]!)) i++;
        delimiter += text[i];
        i++;
      }
      if (i >= text.length) return fail('unterminated heredoc delimiter');
      i++;
      continue;
    }
    // Escapes and expansions in a delimiter are shell-specific; refuse rather than guess.
    if (c === '\\' || c === '$' || c === '`') return fail('unsupported heredoc delimiter');
    delimiter += c;
    i++;
  }
  if (delimiter === '') return fail(quoted ? 'empty heredoc delimiter' : 'missing heredoc delimiter');
  return { ok: true, heredoc: { delimiter, quoted, stripTabs }, end: i };
}

/** Consumes the bodies of every pending heredoc, in order, starting at the line break at `at`. */
function consumeHeredocBodies(
  text: string,
  at: number,
  pending: readonly PendingHeredoc[],
): { ok: true; next: number; bodies: string[] } | { ok: false; reason: string } {
  let pos = skipLineBreak(text, at);
  const bodies: string[] = [];
  for (const doc of pending) {
    let lines = 0;
    let body = '';
    for (;;) {
      if (pos >= text.length) return fail('unterminated heredoc');
      const eol = nextLineBreak(text, pos);
      const line = text.slice(pos, eol === -1 ? text.length : eol);
      pos = eol === -1 ? text.length : skipLineBreak(text, eol);
      const compared = doc.stripTabs ? line.replace(/^\t+/, '') : line;
      body += `${line}\n`;
      if (compared === doc.delimiter) break;
      if (++lines > HEREDOC_MAX_LINES) return fail('heredoc too long');
      if (line.length > HEREDOC_MAX_LINE_CHARS) return fail('heredoc line too long');
      if (!doc.quoted && heredocLineExpands(line)) return fail('expansion in an unquoted heredoc body');
      if (eol === -1) return fail('unterminated heredoc');
    }
    bodies.push(body);
  }
  return { ok: true, next: pos, bodies };
}

function skipLineBreak(text: string, at: number): number {
  if (text[at] === '\r' && text[at + 1] === '\n') return at + 2;
  return at + 1;
}

/** A7.4: an unescaped backtick, or `$` followed by anything that expands. */
export function heredocLineExpands(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '`') return true;
    if (c === '$') {
      const next = line[i + 1];
      if (next !== undefined && /[({[A-Za-z_0-9@*?!$#-]/.test(next)) return true;
    }
  }
  return false;
}

/**
 * A7.5: splits one segment into argv, the words sh passes to the program. Quotes are removed; a
 * backslash outside quotes takes the next character; inside double quotes it escapes only
 * `\\ " $ \``; a `#` starting a word ends the segment; only space, tab and newline separate
 * words. A word that was only quotes (`''`, `""`, `''""`) is an empty argument, as the shell
 * passes it — differs from OpenClaw, whose splitter drops it (`echo '' x` is `[echo, x]`
 * there), so the argv judged would not be the argv run. Null when a quote or escape is open, or
 * for a backslash-newline (a line continuation the shell removes; the analysis refuses it).
 */
export function splitShellArgs(text: string): string[] | null {
  return tokenizeShellArgs(text)?.argv ?? null;
}

interface Tokens {
  argv: string[];
  /** Source offsets where each token starts and ends (end exclusive). */
  starts: number[];
  ends: number[];
}

function tokenizeShellArgs(text: string): Tokens | null {
  const out: Tokens = { argv: [], starts: [], ends: [] };
  // Plain locals, no closure over them: this loop runs once per character of up to 32 KiB.
  let token = '';
  // A word has begun: any character or quote outside a blank, so a word of quotes alone counts.
  let inToken = false;
  let start = 0;
  let quote: '"' | "'" | null = null;
  let i = 0;
  const n = text.length;
  for (; i < n; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else {
        // The literal run up to the closing quote (or the end, which leaves the quote open).
        const close = text.indexOf("'", i);
        const end = close === -1 ? n : close;
        token += text.slice(i, end);
        i = end - 1;
      }
      continue;
    }
    if (quote === '"') {
      if (c === '\\' && i + 1 < n && '\\"$`\n'.includes(text[i + 1]!)) {
        if (text[i + 1] === '\n') return null;
        token += text[i + 1];
        i++;
        continue;
      }
      if (c === '"') quote = null;
      else if (c === '\\') token += c;
      else {
        let end = i + 1;
        while (end < n && text[end] !== '"' && text[end] !== '\\') end++;
        token += text.slice(i, end);
        i = end - 1;
      }
      continue;
    }
    if (isWordSeparator(c)) {
      if (inToken) pushToken(out, token, start, i);
      token = '';
      inToken = false;
      continue;
    }
    if (c === '#' && !inToken) break;
    if (!inToken) start = i;
    inToken = true;
    if (c !== '\\' && c !== "'" && c !== '"') {
      // A run of plain characters joins the token at once.
      let end = i + 1;
      while (end < n && !special(TOKEN_SPECIAL, text, end)) end++;
      token += text.slice(i, end);
      i = end - 1;
      continue;
    }
    if (c === '\\') {
      if (i + 1 >= text.length || text[i + 1] === '\n') return null;
      token += text[i + 1];
      i++;
      continue;
    }
    quote = c;
  }
  if (quote !== null) return null;
  if (inToken) pushToken(out, token, start, i);
  return out;
}

function pushToken(out: Tokens, token: string, start: number, end: number): void {
  out.argv.push(token);
  out.starts.push(start);
  out.ends.push(end);
}
