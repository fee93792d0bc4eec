/**
 * Marks outside content (files, web pages, search results, other users) as data for the model,
 * not instructions. Warden's system prompt tells the model that text inside `<untrusted>` must
 * never be followed as an instruction.
 *
 * A file could contain a closing tag to break out of the wrapper; any `<untrusted` or
 * `</untrusted` inside the content is defanged (`<\/untrusted`, `<\untrusted`) so the only real
 * closing tag is ours. The source attribute is escaped the same way an XML attribute would be.
 */
// `<`, `/` and the name, with the spaces, invisible characters and look-alikes a model may still
// read as a tag between or instead of them.
const GAP = '[\\s\\u200b-\\u200f\\u2060\\ufeff]*';
const TAG_INSIDE = new RegExp(`[<\\uff1c]${GAP}([/\\uff0f\\u2215]?)${GAP}untrusted`, 'gi');

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/[\r\n]/g, ' ');
}

/** Wraps `text` as untrusted data from `source` (e.g. `file:notes/todo.md`). */
export function wrapUntrusted(source: string, text: string): string {
  const body = text.replace(TAG_INSIDE, (m, slash: string) => `<\\${slash ? '/' : ''}${m.slice(-'untrusted'.length)}`);
  return `<untrusted source="${escapeAttribute(source)}">\n${body}\n</untrusted>`;
}

const WHOLE = /^<untrusted source="[^"\r\n]*">\n([\s\S]*)\n<\/untrusted>$/;

/**
 * Whether `text` is exactly one wrapper as `wrapUntrusted` makes it: nothing before or after it,
 * and no tag inside. Only then may a caller skip wrapping it again; text that merely starts
 * like a wrapper (a command's output, a page) could close it and go on outside.
 */
export function isWrappedUntrusted(text: string): boolean {
  const match = WHOLE.exec(text);
  if (!match) return false;
  TAG_INSIDE.lastIndex = 0;
  return !TAG_INSIDE.test(match[1]!);
}
