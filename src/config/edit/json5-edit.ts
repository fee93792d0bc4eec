import JSON5 from 'json5';
import { isPlainObject } from './merge-patch.js';

/**
 * Applies a merge patch to JSON5 (or JSON) text by splicing only the spans it changes, so
 * comments, key order, quoting and layout elsewhere stay as written. The text is scanned once
 * into value spans; each edit replaces a value, inserts a member or removes one.
 */

type Span = { start: number; end: number };
type Node =
  | (Span & { kind: 'object'; members: Member[] })
  | (Span & { kind: 'array' })
  | (Span & { kind: 'scalar' });
interface Member {
  key: string;
  keyStart: number;
  value: Node;
  /** Offset just past the comma that follows the value, when there is one. */
  commaEnd?: number | undefined;
}

export function applyMergePatchToJson5(text: string, patch: Record<string, unknown>, options: { json: boolean }): string {
  let out = text;
  // Edits are applied one at a time and the text is scanned again: spans stay exact.
  for (const edit of plan(patch, [])) {
    const root = scan(out);
    if (root.kind !== 'object') throw new Error('the config file is not an object');
    out = applyEdit(out, root, edit, options);
  }
  return out;
}

interface Edit {
  path: string[];
  value: unknown;
}

/** The patch as assignments; objects merge into existing objects member by member (decided at apply time). */
function plan(patch: Record<string, unknown>, at: string[]): Edit[] {
  return Object.entries(patch).map(([k, v]) => ({ path: [...at, k], value: v }));
}

function applyEdit(text: string, root: Node & { kind: 'object' }, edit: Edit, options: { json: boolean }): string {
  let parent: Node & { kind: 'object' } = root;
  for (let i = 0; i < edit.path.length - 1; i++) {
    const member = parent.members.find((m) => m.key === edit.path[i]);
    if (!member || member.value.kind !== 'object') {
      // Missing parent: the rest of the path is written as one new value.
      const rest = edit.path.slice(i);
      const nested = rest.slice(1).reduceRight<unknown>((acc, key) => ({ [key]: acc }), edit.value);
      if (edit.value === null) return text;
      return member ? replaceValue(text, member.value, nested, options) : insertMember(text, parent, rest[0]!, nested, options);
    }
    parent = member.value;
  }
  const key = edit.path[edit.path.length - 1]!;
  const member = parent.members.find((m) => m.key === key);
  if (edit.value === null) return member ? removeMember(text, parent, member) : text;
  if (member && isPlainObject(edit.value) && member.value.kind === 'object') {
    let out = text;
    for (const inner of plan(edit.value, edit.path)) {
      const again = scan(out) as Node & { kind: 'object' };
      out = applyEdit(out, again, inner, options);
    }
    return out;
  }
  return member ? replaceValue(text, member.value, edit.value, options) : insertMember(text, parent, key, edit.value, options);
}

function replaceValue(text: string, node: Node, value: unknown, options: { json: boolean }): string {
  return text.slice(0, node.start) + render(value, indentAt(text, node.start), options) + text.slice(node.end);
}

function insertMember(text: string, parent: Node & { kind: 'object' }, key: string, value: unknown, options: { json: boolean }): string {
  const last = parent.members[parent.members.length - 1];
  const name = options.json || !/^[A-Za-z_$][\w$]*$/.test(key) ? JSON.stringify(key) : key;
  if (!last) {
    const indent = indentAt(text, parent.start);
    const inner = `${indent}  `;
    return `${text.slice(0, parent.start)}{\n${inner}${name}: ${render(value, inner, options)}\n${indent}}${text.slice(parent.end)}`;
  }
  const indent = indentAt(text, last.keyStart);
  const entry = `${name}: ${render(stripNulls(value), indent, options)}`;
  if (last.commaEnd !== undefined) return `${text.slice(0, last.commaEnd)}\n${indent}${entry},${text.slice(last.commaEnd)}`;
  return `${text.slice(0, last.value.end)},\n${indent}${entry}${text.slice(last.value.end)}`;
}

function removeMember(text: string, parent: Node & { kind: 'object' }, member: Member): string {
  const index = parent.members.indexOf(member);
  const lineStart = text.lastIndexOf('\n', member.keyStart - 1) + 1;
  const onOwnLine = /^[ \t]*$/.test(text.slice(lineStart, member.keyStart));
  const from = onOwnLine ? lineStart : member.keyStart;
  if (member.commaEnd !== undefined) {
    let to = member.commaEnd;
    if (onOwnLine) {
      const eol = text.indexOf('\n', to);
      if (eol !== -1 && /^[ \t]*$/.test(text.slice(to, eol))) to = eol + 1;
    }
    return text.slice(0, from) + text.slice(to);
  }
  // The last member without a trailing comma: the previous member's comma goes with it.
  const previous = parent.members[index - 1];
  if (previous?.commaEnd !== undefined) return text.slice(0, previous.value.end) + text.slice(member.value.end);
  return text.slice(0, member.keyStart) + text.slice(member.value.end);
}

function render(value: unknown, indent: string, options: { json: boolean }): string {
  const raw = options.json ? JSON.stringify(stripNulls(value), null, 2) : JSON5.stringify(stripNulls(value), null, 2);
  return raw.split('\n').join(`\n${indent}`);
}

function stripNulls(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, stripNulls(v)]));
}

/** The whitespace that starts the line `offset` is on. */
function indentAt(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

/** Scans JSON5 text into value spans. Throws on malformed text (the loader reports it first). */
export function scan(text: string): Node {
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`malformed JSON5 at offset ${i}: ${what}`);
  };
  const skip = () => {
    for (;;) {
      const c = text[i];
      if (c === undefined) return;
      if (/\s/.test(c) || c === '\uFEFF') i++;
      else if (c === '/' && text[i + 1] === '/') {
        const eol = text.indexOf('\n', i);
        i = eol === -1 ? text.length : eol + 1;
      } else if (c === '/' && text[i + 1] === '*') {
        const end = text.indexOf('*/', i + 2);
        if (end === -1) fail('unclosed comment');
        i = end + 2;
      } else return;
    }
  };
  const string = (): string => {
    const quote = text[i]!;
    const start = i++;
    while (i < text.length && text[i] !== quote) i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('unclosed string');
    i++;
    return JSON5.parse(text.slice(start, i)) as string;
  };
  const value = (): Node => {
    skip();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i++;
      const members: Member[] = [];
      for (;;) {
        skip();
        if (text[i] === '}') break;
        const keyStart = i;
        let key: string;
        if (text[i] === '"' || text[i] === "'") key = string();
        else {
          const m = /^[\p{L}\p{N}_$\\]+/u.exec(text.slice(i));
          if (!m) fail('expected a key');
          key = m![0];
          i += key.length;
        }
        skip();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        const member: Member = { key, keyStart, value: value() };
        skip();
        if (text[i] === ',') member.commaEnd = ++i;
        else if (text[i] !== '}') fail('expected "," or "}"');
        members.push(member);
      }
      i++;
      return { kind: 'object', start, end: i, members };
    }
    if (c === '[') {
      i++;
      for (;;) {
        skip();
        if (text[i] === ']') break;
        value();
        skip();
        if (text[i] === ',') i++;
        else if (text[i] !== ']') fail('expected "," or "]"');
      }
      i++;
      return { kind: 'array', start, end: i };
    }
    if (c === '"' || c === "'") {
      string();
      return { kind: 'scalar', start, end: i };
    }
    const m = /^[^\s,\]}/]+/.exec(text.slice(i));
    if (!m) fail('expected a value');
    i += m![0].length;
    return { kind: 'scalar', start, end: i };
  };
  const root = value();
  skip();
  if (i < text.length) fail('text after the value');
  return root;
}
