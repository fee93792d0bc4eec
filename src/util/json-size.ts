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
    const head = headSize(tool);
    chars += head.chars;
    bytes += head.bytes;
    const { parameters } = tool;
    if (parameters === undefined) continue;
    const schema = jsonSize(parameters);
    const extra = (head.empty ? 0 : 1) + PARAMETERS_KEY;
    chars += extra + schema.chars;
    bytes += extra + schema.bytes;
  }
  return { chars, bytes };
}

interface HeadSize extends JsonSize {
  /** Whether the fields besides `parameters` serialise to `{}`. */
  empty: boolean;
}

/**
 * The size of a tool's fields besides `parameters` (name, description), as JSON.stringify writes
 * them: each own enumerable key with a value it writes (undefined and functions are left out, as
 * it leaves them out). The tool objects of a request are often made afresh for each request,
 * their strings not: a string's serialised size is kept per string (a description is most of a
 * head), anything else is serialised each time.
 */
function headSize(tool: { parameters?: object | undefined }): HeadSize {
  const record = tool as Record<string, unknown>;
  let chars = 2;
  let bytes = 2;
  let fields = 0;
  for (const key of Object.keys(record)) {
    if (key === 'parameters') continue;
    const value = record[key];
    let part: JsonSize;
    if (typeof value === 'string') part = stringSize(value);
    else {
      const text = JSON.stringify(value) as string | undefined;
      if (text === undefined) continue;
      part = { chars: text.length, bytes: Buffer.byteLength(text) };
    }
    const name = stringSize(key);
    // `"key":value`, and a comma before every field but the first.
    const extra = (fields > 0 ? 1 : 0) + name.chars + 1;
    chars += extra + part.chars;
    bytes += extra - name.chars + name.bytes + part.bytes;
    fields++;
  }
  return { chars, bytes, empty: fields === 0 };
}

/** Strings measured, each with its serialised size; emptied when full (tool names and descriptions repeat). */
const strings = new Map<string, JsonSize>();
const STRINGS_KEPT = 4096;

function stringSize(value: string): JsonSize {
  let size = strings.get(value);
  if (!size) {
    const text = JSON.stringify(value);
    size = { chars: text.length, bytes: Buffer.byteLength(text) };
    if (strings.size >= STRINGS_KEPT) strings.clear();
    strings.set(value, size);
  }
  return size;
}
