import type { Duplex } from 'node:stream';

/**
 * The sandbox's only way to the egress proxy: one descriptor, inherited by the sandbox at
 * EGRESS_FD (one end of a socketpair made when the command is spawned), never a path. A socket
 * with a path is reachable by every process running as the sandbox uid — inside the sandbox's
 * mount namespace too, through /proc/<pid>/root — so the proxy's own socket stays in a
 * directory only Warden can enter, and the forwarder inside carries each of the command's
 * connections over this descriptor as a numbered stream. Warden opens one proxy connection per
 * stream. A process outside the sandbox tree never holds the descriptor.
 *
 * Frames: type (1 byte), stream id (4 bytes, big-endian), payload length (4 bytes), payload.
 * OPEN starts a stream (forwarder → Warden only), DATA carries bytes, CLOSE ends a stream
 * (either way). The forwarder in forwarder.ts speaks the same frames.
 */
export const EGRESS_FD = 5;
export const FRAME_OPEN = 1;
export const FRAME_DATA = 2;
export const FRAME_CLOSE = 3;
export const FRAME_HEAD = 9;
/** Largest payload written in one frame. */
export const FRAME_CHUNK = 64 * 1024;
/** Largest payload accepted: anything longer is a broken or hostile peer. */
export const MAX_FRAME = 1024 * 1024;
/** Streams open at once over one channel; more are closed at once (the proxy caps connections too). */
export const MAX_STREAMS = 256;

export interface Frame {
  type: number;
  id: number;
  payload: Buffer;
}

export function encodeFrame(type: number, id: number, payload: Uint8Array = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(FRAME_HEAD);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(id >>> 0, 1);
  head.writeUInt32BE(payload.length, 5);
  return Buffer.concat([head, payload]);
}

/** Reassembles frames from a byte stream; an unknown type or an oversized length is an error (the channel is then dropped). */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): { ok: true; frames: Frame[] } | { ok: false; error: string } {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const frames: Frame[] = [];
    while (this.buffered.length >= FRAME_HEAD) {
      const type = this.buffered.readUInt8(0);
      const id = this.buffered.readUInt32BE(1);
      const length = this.buffered.readUInt32BE(5);
      if (type !== FRAME_OPEN && type !== FRAME_DATA && type !== FRAME_CLOSE) return { ok: false, error: `unknown frame type ${type}` };
      if (length > MAX_FRAME) return { ok: false, error: `frame of ${length} bytes` };
      if (this.buffered.length < FRAME_HEAD + length) break;
      frames.push({ type, id, payload: this.buffered.subarray(FRAME_HEAD, FRAME_HEAD + length) });
      this.buffered = this.buffered.subarray(FRAME_HEAD + length);
    }
    return { ok: true, frames };
  }
}

/**
 * Warden's end of the channel: each stream the forwarder opens becomes one connection made by
 * `connect` (to the proxy), bytes relayed both ways with backpressure (a full proxy connection
 * pauses the channel; a full channel pauses the proxy connections). Returns a function that
 * drops everything.
 */
export function relayChannel(channel: Duplex, connect: () => Duplex, onError: (why: string) => void = () => {}): () => void {
  const streams = new Map<number, Duplex>();
  const reader = new FrameReader();
  /** Proxy connections the channel's reading waits for. */
  const waiting = new Set<number>();
  let closed = false;
  let full = false;

  const send = (type: number, id: number, payload?: Buffer): void => {
    if (closed || channel.destroyed) return;
    if (!channel.write(encodeFrame(type, id, payload)) && !full) {
      full = true;
      for (const s of streams.values()) s.pause();
      channel.once('drain', () => {
        full = false;
        for (const s of streams.values()) s.resume();
      });
    }
  };
  const shut = (): void => {
    if (closed) return;
    closed = true;
    for (const s of streams.values()) s.destroy();
    streams.clear();
    channel.destroy();
  };

  const open = (id: number): void => {
    if (streams.has(id)) {
      onError(`stream ${id} opened twice`);
      shut();
      return;
    }
    if (streams.size >= MAX_STREAMS) {
      send(FRAME_CLOSE, id);
      return;
    }
    const conn = connect();
    streams.set(id, conn);
    if (full) conn.pause();
    conn.on('data', (chunk: Buffer) => {
      for (let at = 0; at < chunk.length; at += FRAME_CHUNK) send(FRAME_DATA, id, chunk.subarray(at, at + FRAME_CHUNK));
    });
    conn.on('error', () => conn.destroy());
    conn.once('close', () => {
      if (streams.get(id) !== conn) return;
      streams.delete(id);
      if (waiting.delete(id) && waiting.size === 0) channel.resume();
      send(FRAME_CLOSE, id);
    });
  };

  channel.on('data', (chunk: Buffer) => {
    const read = reader.push(chunk);
    if (!read.ok) {
      onError(read.error);
      shut();
      return;
    }
    for (const f of read.frames) {
      if (f.type === FRAME_OPEN) open(f.id);
      else if (f.type === FRAME_DATA) {
        const conn = streams.get(f.id);
        if (conn && !conn.destroyed && !conn.write(f.payload) && !waiting.has(f.id)) {
          waiting.add(f.id);
          channel.pause();
          conn.once('drain', () => {
            if (waiting.delete(f.id) && waiting.size === 0) channel.resume();
          });
        }
      } else streams.get(f.id)?.end();
    }
  });
  channel.on('error', () => shut());
  channel.once('close', () => shut());
  return shut;
}
