/**
 * What a file's bytes are, judged by content rather than by its name (reference C4: images are
 * detected by content). Only the four formats every vision model accepts count as images.
 */
export type FileKind = { kind: 'image'; mimeType: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' } | { kind: 'binary' } | { kind: 'text' };

/** How much of the head is inspected for NUL bytes, like git and grep do. */
const SNIFF_BYTES = 8000;

function startsWith(buf: Uint8Array, bytes: readonly number[], at = 0): boolean {
  if (buf.length < at + bytes.length) return false;
  return bytes.every((b, i) => buf[at + i] === b);
}

const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

export function sniffFileKind(buf: Uint8Array): FileKind {
  if (startsWith(buf, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { kind: 'image', mimeType: 'image/png' };
  if (startsWith(buf, [0xff, 0xd8, 0xff])) return { kind: 'image', mimeType: 'image/jpeg' };
  if (startsWith(buf, ascii('GIF87a')) || startsWith(buf, ascii('GIF89a'))) return { kind: 'image', mimeType: 'image/gif' };
  if (startsWith(buf, ascii('RIFF')) && startsWith(buf, ascii('WEBP'), 8)) return { kind: 'image', mimeType: 'image/webp' };
  const head = buf.subarray(0, SNIFF_BYTES);
  if (head.includes(0)) return { kind: 'binary' };
  return { kind: 'text' };
}
