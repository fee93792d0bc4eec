const FENCE = /^\s*(`{3,}|~{3,})/;

interface OpenFence {
  /** The fence marker that closes it (```` ``` ```` or `~~~`, as long as the opener). */
  marker: string;
  /** The opening line, repeated at the top of the next chunk so the language tag survives. */
  line: string;
}

/** The fence state after `line`: opens, closes, or leaves unchanged the current fence. */
function fenceAfter(open: OpenFence | null, line: string): OpenFence | null {
  const match = FENCE.exec(line);
  if (!match) return open;
  const marker = match[1]!;
  // Only the marker and language tag are carried over; a long info string could starve a chunk.
  if (!open) return { marker, line: line.trim().slice(0, marker.length + 16) };
  // A fence closes with the same character, at least as long, and nothing after it.
  const closes = marker[0] === open.marker[0] && marker.length >= open.marker.length && line.trim() === marker;
  return closes ? null : open;
}

/**
 * Splits text into chunks of at most `limit` characters, preferring line breaks. A code block
 * cut by a chunk boundary is closed at the end of the chunk and reopened (with its language
 * tag) at the start of the next, so every chunk renders as the reader expects. Lines longer
 * than a chunk are cut hard. Empty text gives no chunks.
 */
export function chunkText(text: string, limit: number): string[] {
  if (limit < 32) throw new RangeError(`chunk limit ${limit} is too small`);
  if (text.length <= limit) return text.length > 0 ? [text] : [];

  const chunks: string[] = [];
  let open: OpenFence | null = null;
  let current = '';
  // Length of the reopened fence line at the top of `current`: text beyond it is real content.
  let prefix = 0;

  const closing = (fence: OpenFence | null) => (fence ? fence.marker.length + 1 : 0);
  const flush = () => {
    chunks.push(open ? `${current}\n${open.marker}` : current);
    current = open ? open.line : '';
    prefix = current.length;
  };

  for (const whole of text.split('\n')) {
    let line = whole;
    const after = fenceAfter(open, line);
    for (;;) {
      const sep = current.length > 0 ? 1 : 0;
      if (current.length + sep + line.length + closing(after) <= limit) {
        current += (sep ? '\n' : '') + line;
        open = after;
        break;
      }
      if (current.length > prefix) {
        flush();
        continue;
      }
      // The line alone does not fit: cut it. Pieces of a line never change the fence state.
      const room = limit - current.length - sep - closing(open);
      current += (sep ? '\n' : '') + line.slice(0, room);
      line = line.slice(room);
      flush();
    }
  }
  if (current.length > prefix) chunks.push(open ? `${current}\n${open.marker}` : current);
  return chunks;
}
