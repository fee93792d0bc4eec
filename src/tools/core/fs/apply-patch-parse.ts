/**
 * Parser for the `*** Begin Patch` envelope (reference C7), pure. Errors carry the 1-based line
 * number of the input line that broke the grammar.
 */
export interface UpdateChunk {
  /** The text after `@@ `, located before the old lines are searched. */
  changeContext: string | undefined;
  oldLines: string[];
  newLines: string[];
  /** `*** End of File`: the old lines are searched at the end of the file. */
  isEndOfFile: boolean;
}

export type PatchHunk =
  | { type: 'add'; path: string; contents: string }
  | { type: 'delete'; path: string }
  | { type: 'update'; path: string; moveTo: string | undefined; chunks: UpdateChunk[] };

export type ParseOutcome = { ok: true; hunks: PatchHunk[] } | { ok: false; message: string };

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File:';
const DELETE = '*** Delete File:';
const UPDATE = '*** Update File:';
const MOVE = '*** Move to:';
const EOF_MARKER = '*** End of File';
const HEREDOC_OPEN = /^<<\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1\s*$/;

class PatchSyntaxError extends Error {}

function fail(line: number, message: string): never {
  throw new PatchSyntaxError(`Invalid patch (line ${line}): ${message}`);
}

/** Strips a `<<EOF … EOF` wrapper a model sometimes copies from shell usage. */
function unwrapHeredoc(lines: string[]): string[] {
  const open = HEREDOC_OPEN.exec(lines[0]?.trim() ?? '');
  if (open && lines.length >= 2 && lines[lines.length - 1]!.trim() === open[2]) return lines.slice(1, -1);
  return lines;
}

export function parsePatch(input: string): ParseOutcome {
  if (typeof input !== 'string' || input.trim() === '') return { ok: false, message: 'Invalid patch: input is empty' };
  const lines = unwrapHeredoc(input.trim().split(/\r?\n/));
  // Line numbers in errors count from the first line of the envelope.
  try {
    if (lines[0]?.trim() !== BEGIN) fail(1, `the first line must be '${BEGIN}'`);
    if (lines.length < 2 || lines[lines.length - 1]!.trim() !== END) fail(lines.length, `the last line must be '${END}'`);
    return { ok: true, hunks: parseHunks(lines, lines.length - 1) };
  } catch (err) {
    if (err instanceof PatchSyntaxError) return { ok: false, message: err.message };
    throw err;
  }
}

function parseHunks(lines: string[], end: number): PatchHunk[] {
  const hunks: PatchHunk[] = [];
  let i = 1;
  while (i < end) {
    const header = lines[i]!.trim();
    if (header === '') {
      i++;
      continue;
    }
    if (header.startsWith(ADD)) {
      const path = requirePath(header.slice(ADD.length), i);
      i++;
      let contents = '';
      while (i < end && lines[i]!.startsWith('+')) contents += `${lines[i++]!.slice(1)}\n`;
      hunks.push({ type: 'add', path, contents });
    } else if (header.startsWith(DELETE)) {
      hunks.push({ type: 'delete', path: requirePath(header.slice(DELETE.length), i) });
      i++;
    } else if (header.startsWith(UPDATE)) {
      const path = requirePath(header.slice(UPDATE.length), i);
      const headerLine = i;
      i++;
      let moveTo: string | undefined;
      if (i < end && lines[i]!.trim().startsWith(MOVE)) moveTo = requirePath(lines[i++]!.trim().slice(MOVE.length), i - 1);
      const chunks: UpdateChunk[] = [];
      while (i < end) {
        if (lines[i]!.trim() === '') {
          i++;
          continue;
        }
        if (lines[i]!.trimStart().startsWith('***')) break;
        const { chunk, consumed } = parseChunk(lines, i, end, chunks.length === 0);
        chunks.push(chunk);
        i += consumed;
      }
      if (chunks.length === 0) fail(headerLine + 1, `update hunk for '${path}' has no changes`);
      hunks.push({ type: 'update', path, moveTo, chunks });
    } else {
      fail(i + 1, `'${header}' is not a valid hunk header. Valid hunk headers: '${ADD} {path}', '${DELETE} {path}', '${UPDATE} {path}'`);
    }
  }
  return hunks;
}

function requirePath(raw: string, index: number): string {
  const path = raw.trim();
  if (path === '') fail(index + 1, 'missing file path');
  return path;
}

function parseChunk(lines: string[], start: number, end: number, firstChunk: boolean): { chunk: UpdateChunk; consumed: number } {
  const first = lines[start]!;
  let changeContext: string | undefined;
  let i = start;
  if (first.trim() === '@@') i++;
  else if (first.trimStart().startsWith('@@ ')) {
    changeContext = first.trimStart().slice(3);
    i++;
  } else if (!firstChunk) {
    fail(start + 1, `expected an '@@' line to start the next change, got: '${first}'`);
  }
  const chunk: UpdateChunk = { changeContext, oldLines: [], newLines: [], isEndOfFile: false };
  let parsed = 0;
  for (; i < end; i++) {
    const line = lines[i]!;
    if (line === EOF_MARKER) {
      if (parsed === 0) fail(i + 1, 'change has no lines');
      chunk.isEndOfFile = true;
      i++;
      break;
    }
    const marker = line[0];
    if (line === '') {
      chunk.oldLines.push('');
      chunk.newLines.push('');
    } else if (marker === ' ') {
      chunk.oldLines.push(line.slice(1));
      chunk.newLines.push(line.slice(1));
    } else if (marker === '-') {
      chunk.oldLines.push(line.slice(1));
    } else if (marker === '+') {
      chunk.newLines.push(line.slice(1));
    } else {
      if (parsed === 0) {
        fail(i + 1, `unexpected line in update hunk: '${line}'. Every line must start with ' ' (context), '+' (added) or '-' (removed)`);
      }
      break;
    }
    parsed++;
  }
  if (parsed === 0) fail(start + 1, 'change has no lines');
  return { chunk, consumed: i - start };
}
