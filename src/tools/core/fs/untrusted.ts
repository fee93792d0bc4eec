/**
 * Marks file content as data for the model, not instructions. Warden's system prompt tells the
 * model that text inside `<untrusted>` must never be followed as an instruction.
 *
 * A file could contain a closing tag to break out of the wrapper; any `<untrusted` or
 * `</untrusted` inside the content is defanged (`<\/untrusted`, `<\untrusted`) so the only real
 * closing tag is ours. The source attribute is escaped the same way an XML attribute would be.
 */
const TAG_INSIDE = /<(\/?)untrusted/gi;

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/[\r\n]/g, ' ');
}

/** Wraps `text` as untrusted data from `source` (e.g. `file:notes/todo.md`). */
export function wrapUntrusted(source: string, text: string): string {
  const body = text.replace(TAG_INSIDE, (_m, slash: string) => `<\\${slash}untrusted`);
  return `<untrusted source="${escapeAttribute(source)}">\n${body}\n</untrusted>`;
}
