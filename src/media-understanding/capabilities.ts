import type { MediaCapability } from './types.js';

/** The capability an attachment asks for, from its declared type or its first bytes. */
export function capabilityOf(contentType: string | undefined, data: Buffer): MediaCapability | undefined {
  const type = (contentType ?? '').toLowerCase();
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('audio/')) return 'audio';
  if (type.startsWith('video/')) return 'video';
  return sniff(data)?.capability;
}

/** Magic numbers of the formats chat platforms send. */
export function sniff(data: Buffer): { capability: MediaCapability; mime: string; ext: string } | undefined {
  const b = data;
  const at = (offset: number, text: string) => b.subarray(offset, offset + text.length).toString('latin1') === text;
  if (b[0] === 0x89 && at(1, 'PNG')) return { capability: 'image', mime: 'image/png', ext: 'png' };
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { capability: 'image', mime: 'image/jpeg', ext: 'jpg' };
  if (at(0, 'GIF8')) return { capability: 'image', mime: 'image/gif', ext: 'gif' };
  if (at(0, 'RIFF') && at(8, 'WEBP')) return { capability: 'image', mime: 'image/webp', ext: 'webp' };
  if (at(0, 'RIFF') && at(8, 'WAVE')) return { capability: 'audio', mime: 'audio/wav', ext: 'wav' };
  if (at(0, 'OggS')) return { capability: 'audio', mime: 'audio/ogg', ext: 'ogg' };
  if (at(0, 'fLaC')) return { capability: 'audio', mime: 'audio/flac', ext: 'flac' };
  if (at(0, 'ID3') || (b[0] === 0xff && ((b[1] ?? 0) & 0xe0) === 0xe0)) return { capability: 'audio', mime: 'audio/mpeg', ext: 'mp3' };
  if (at(4, 'ftyp')) {
    const brand = b.subarray(8, 12).toString('latin1');
    return brand.startsWith('M4A') ? { capability: 'audio', mime: 'audio/mp4', ext: 'm4a' } : { capability: 'video', mime: 'video/mp4', ext: 'mp4' };
  }
  if (b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return { capability: 'video', mime: 'video/webm', ext: 'webm' };
  return undefined;
}

/** A MIME type and extension for the request, preferring what the sender declared. */
export function mediaType(contentType: string | undefined, name: string | undefined, data: Buffer): { mime: string; ext: string } {
  const sniffed = sniff(data);
  const declared = contentType?.split(';')[0]?.trim().toLowerCase();
  const ext = /\.([a-z0-9]{1,5})$/i.exec(name ?? '')?.[1]?.toLowerCase() ?? sniffed?.ext ?? 'bin';
  return { mime: declared || sniffed?.mime || 'application/octet-stream', ext };
}
