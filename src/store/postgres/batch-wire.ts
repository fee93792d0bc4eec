/**
 * A batch's extended-protocol messages, written into one buffer: Parse (where the connection has
 * not prepared the statement), Bind, Describe (where the statement's columns are not known yet),
 * Execute, for each statement; one Sync at the end. Byte for byte what pg-protocol's serializer
 * writes for the same messages (`batch-wire.test.ts` compares them), but sized first and written
 * once: one allocation and one socket write per batch instead of one of each per message.
 */

/** A parameter as the protocol carries it: text, bytes, or NULL. */
export type WireValue = string | Buffer | null;

/** One statement as the batch writes it. */
export interface WireMessage {
  /** The statement's name ('' or undefined: the unnamed statement). */
  name?: string | undefined;
  text: string;
  values: readonly WireValue[];
  /** Send a Parse first (the connection has not prepared it). */
  parse: boolean;
  /** Ask for the result's columns (a RowDescription or NoData before the rows). */
  describe: boolean;
}

const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'
// Describe the unnamed portal: 'D', length 6, 'P', NUL.
const DESCRIBE_PORTAL = [0x44, 0, 0, 0, 6, 0x50, 0] as const;
// Execute the unnamed portal, no row limit: 'E', length 9, NUL, 0.
const EXECUTE = [0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0] as const;
// Sync: 'S', length 4.
const SYNC = [0x53, 0, 0, 0, 4] as const;

const cstringBytes = (s: string): number => Buffer.byteLength(s, 'utf8') + 1;

/** The bytes of one statement's messages. */
function messageBytes(m: WireMessage, name: string): number {
  let n = 0;
  // Parse: code, length, name, text, no parameter types (int16 0).
  if (m.parse) n += 1 + 4 + cstringBytes(name) + cstringBytes(m.text) + 2;
  // Bind: code, length, portal '', statement name, format codes, values, result format (one code).
  n += 1 + 4 + 1 + cstringBytes(name) + 2 + 2 * m.values.length + 2 + 2 + 2;
  for (const v of m.values) n += 4 + (v === null ? 0 : typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : v.length);
  if (m.describe) n += DESCRIBE_PORTAL.length;
  return n + EXECUTE.length;
}

/** The whole batch's messages in one buffer, ending in one Sync. */
export function encodeBatch(messages: readonly WireMessage[]): Buffer {
  let size = SYNC.length;
  for (const m of messages) size += messageBytes(m, m.name ?? '');
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  const cstring = (s: string) => {
    at += buf.write(s, at, 'utf8');
    buf[at++] = 0;
  };
  const bytes = (list: readonly number[]) => {
    for (const b of list) buf[at++] = b;
  };
  for (const m of messages) {
    const name = m.name ?? '';
    if (m.parse) {
      const start = at;
      buf[at] = PARSE;
      at += 5;
      cstring(name);
      cstring(m.text);
      at = buf.writeInt16BE(0, at);
      buf.writeInt32BE(at - start - 1, start + 1);
    }
    const start = at;
    buf[at] = BIND;
    at += 5;
    buf[at++] = 0; // the unnamed portal
    cstring(name);
    const count = m.values.length;
    at = buf.writeInt16BE(count, at);
    // Format codes: text, or binary for bytes (as pg writes them).
    for (const v of m.values) at = buf.writeInt16BE(v !== null && typeof v !== 'string' ? 1 : 0, at);
    at = buf.writeInt16BE(count, at);
    for (const v of m.values) {
      if (v === null) at = buf.writeInt32BE(-1, at);
      else if (typeof v === 'string') {
        const lengthAt = at;
        at += 4;
        const written = buf.write(v, at, 'utf8');
        buf.writeInt32BE(written, lengthAt);
        at += written;
      } else {
        at = buf.writeInt32BE(v.length, at);
        at += v.copy(buf, at);
      }
    }
    // Every result column as text.
    at = buf.writeInt16BE(1, at);
    at = buf.writeInt16BE(0, at);
    buf.writeInt32BE(at - start - 1, start + 1);
    if (m.describe) bytes(DESCRIBE_PORTAL);
    bytes(EXECUTE);
  }
  bytes(SYNC);
  if (at !== size) throw new Error(`batch encoding wrote ${at} bytes of ${size}`);
  return buf;
}
