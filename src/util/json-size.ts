/**
 * The length and UTF-8 byte count of `JSON.stringify(value)`, memoised per object. The tool
 * schemas a turn sends are the same objects every turn (the projection caches them), and the
 * turn measures them several times per model call (context budget, usage facts): serialising
 * tens of kilobytes of schema each time was measurable per message. Only for objects nobody
 * mutates after they are first measured.
 */
export interface JsonSize {
  chars: number;
  bytes: number;
}

const sizes = new WeakMap<object, JsonSize>();

export function jsonSize(value: object): JsonSize {
  let size = sizes.get(value);
  if (!size) {
    const text = JSON.stringify(value) ?? '';
    size = { chars: text.length, bytes: Buffer.byteLength(text) };
    sizes.set(value, size);
  }
  return size;
}

/** `"parameters":` as JSON.stringify writes the key. */
const PARAMETERS_KEY = '"parameters":'.length;

/**
 * `JSON.stringify(tools)`'s length and bytes, the schemas (`parameters`) measured through
 * `jsonSize`, the rest of each tool (name, description) serialised as before. Key order does
 * not change a length, so the result equals measuring the whole array.
 */
export function toolsJsonSize(tools: ReadonlyArray<{ parameters?: object | undefined }>): JsonSize {
  let chars = 2 + Math.max(0, tools.length - 1);
  let bytes = chars;
  for (const tool of tools) {
    const { parameters, ...rest } = tool;
    const head = JSON.stringify(rest);
    chars += head.length;
    bytes += Buffer.byteLength(head);
    if (parameters === undefined) continue;
    const schema = jsonSize(parameters);
    const extra = (head === '{}' ? 0 : 1) + PARAMETERS_KEY;
    chars += extra + schema.chars;
    bytes += extra + schema.bytes;
  }
  return { chars, bytes };
}
