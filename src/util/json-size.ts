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
  /** The tool's fields besides `parameters`, as measured (primitives only). */
  fields: Array<[string, unknown]>;
  /** Whether they serialise to `{}`. */
  empty: boolean;
}

const heads = new WeakMap<object, HeadSize>();

/**
 * The size of a tool's fields besides `parameters` (name, description), serialised. Kept per tool
 * object together with the fields it was measured from, and used again only when the object holds
 * exactly those fields with the same primitive values: then the serialisation is the same text.
 * A tool with an object among those fields is measured every time.
 */
function headSize(tool: { parameters?: object | undefined }): HeadSize {
  const kept = heads.get(tool);
  if (kept && sameFields(tool as Record<string, unknown>, kept.fields)) return kept;
  const { parameters: _schema, ...rest } = tool;
  const head = JSON.stringify(rest);
  const fields = Object.entries(rest);
  const size: HeadSize = { chars: head.length, bytes: Buffer.byteLength(head), fields, empty: head === '{}' };
  if (fields.every(([, v]) => v === null || (typeof v !== 'object' && typeof v !== 'function'))) heads.set(tool, size);
  return size;
}

function sameFields(tool: Record<string, unknown>, fields: ReadonlyArray<[string, unknown]>): boolean {
  const keys = Object.keys(tool);
  let i = 0;
  for (const key of keys) {
    if (key === 'parameters') continue;
    const field = fields[i++];
    if (!field || field[0] !== key || !Object.is(tool[key], field[1])) return false;
  }
  return i === fields.length;
}
