import net from 'node:net';
import { Duplex, PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame, FRAME_CLOSE, FRAME_DATA, FRAME_HEAD, FRAME_OPEN, FrameReader, MAX_FRAME, MAX_STREAMS, relayChannel } from './channel.js';

describe('FrameReader: what the forwarder (inside the sandbox) may write', () => {
  const head = (type: number, id: number, length: number) => {
    const b = Buffer.alloc(FRAME_HEAD);
    b.writeUInt8(type, 0);
    b.writeUInt32BE(id, 1);
    b.writeUInt32BE(length, 5);
    return b;
  };
  const rows: Array<[string, Buffer[], { frames?: Array<[number, number, string]>; error?: RegExp }]> = [
    ['one OPEN', [encodeFrame(FRAME_OPEN, 1)], { frames: [[FRAME_OPEN, 1, '']] }],
    ['DATA split across three chunks', (() => { const f = encodeFrame(FRAME_DATA, 7, Buffer.from('hello')); return [f.subarray(0, 3), f.subarray(3, 10), f.subarray(10)]; })(), { frames: [[FRAME_DATA, 7, 'hello']] }],
    ['two frames in one chunk', [Buffer.concat([encodeFrame(FRAME_DATA, 2, Buffer.from('a')), encodeFrame(FRAME_CLOSE, 2)])], { frames: [[FRAME_DATA, 2, 'a'], [FRAME_CLOSE, 2, '']] }],
    ['a head without its payload yet', [head(FRAME_DATA, 1, 4), Buffer.from('ab')], { frames: [] }],
    ['an unknown frame type', [head(9, 1, 0)], { error: /unknown frame type 9/ }],
    ['type 0', [head(0, 1, 0)], { error: /unknown frame type 0/ }],
    ['a length past the limit (memory exhaustion)', [head(FRAME_DATA, 1, MAX_FRAME + 1)], { error: /frame of/ }],
    ['the largest length', [head(FRAME_DATA, 1, 0xffffffff)], { error: /frame of/ }],
  ];
  it.each(rows)('%s', (_what, chunks, expected) => {
    const reader = new FrameReader();
    const frames: Array<[number, number, string]> = [];
    let error: string | undefined;
    for (const c of chunks) {
      const r = reader.push(c);
      if (!r.ok) {
        error = r.error;
        break;
      }
      frames.push(...r.frames.map((f): [number, number, string] => [f.type, f.id, f.payload.toString()]));
    }
    if (expected.error) expect(error).toMatch(expected.error);
    else {
      expect(error).toBeUndefined();
      expect(frames).toEqual(expected.frames);
    }
  });
});

/** A channel pair in memory: what the test writes on `inside` arrives at the relay, and back. */
function pair(): { inside: Duplex; outside: Duplex } {
  const toOutside = new PassThrough();
  const toInside = new PassThrough();
  const outside = Duplex.from({ readable: toOutside, writable: toInside });
  const inside = Duplex.from({ readable: toInside, writable: toOutside });
  // Dropping the channel aborts the in-memory halves; a socket would just close.
  for (const end of [inside, outside, toInside, toOutside]) end.on('error', () => {});
  return { inside, outside };
}

describe('relayChannel: one proxy connection per stream', () => {
  const servers: net.Server[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
  });

  async function echoServer(): Promise<{ port: number; accepted: () => number }> {
    let accepted = 0;
    const server = net.createServer((c) => {
      accepted += 1;
      c.on('data', (d) => c.write(`echo:${d}`));
      c.on('error', () => {});
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return { port: (server.address() as net.AddressInfo).port, accepted: () => accepted };
  }

  function collect(inside: Duplex): { frames: Array<[number, number, string]>; wait: (n: number) => Promise<void> } {
    const reader = new FrameReader();
    const frames: Array<[number, number, string]> = [];
    inside.on('data', (chunk: Buffer) => {
      const r = reader.push(chunk);
      if (r.ok) frames.push(...r.frames.map((f): [number, number, string] => [f.type, f.id, f.payload.toString()]));
    });
    return {
      frames,
      wait: async (n) => {
        const until = Date.now() + 5000;
        while (frames.length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      },
    };
  }

  it('relays each stream to its own connection, both ways, and closes it', async () => {
    const { port, accepted } = await echoServer();
    const { inside, outside } = pair();
    relayChannel(outside, () => net.connect(port, '127.0.0.1'));
    const seen = collect(inside);
    inside.write(encodeFrame(FRAME_OPEN, 1));
    inside.write(encodeFrame(FRAME_OPEN, 2));
    inside.write(encodeFrame(FRAME_DATA, 1, Buffer.from('one')));
    inside.write(encodeFrame(FRAME_DATA, 2, Buffer.from('two')));
    await seen.wait(2);
    expect(seen.frames).toEqual(expect.arrayContaining([[FRAME_DATA, 1, 'echo:one'], [FRAME_DATA, 2, 'echo:two']]));
    expect(accepted()).toBe(2);
    inside.write(encodeFrame(FRAME_CLOSE, 1));
    await seen.wait(3);
    expect(seen.frames).toContainEqual([FRAME_CLOSE, 1, '']);
  });

  it('an OPEN for a stream already open drops the whole channel (a broken or hostile forwarder)', async () => {
    const { port } = await echoServer();
    const { inside, outside } = pair();
    const errors: string[] = [];
    relayChannel(outside, () => net.connect(port, '127.0.0.1'), (why) => errors.push(why));
    inside.write(encodeFrame(FRAME_OPEN, 5));
    inside.write(encodeFrame(FRAME_OPEN, 5));
    await new Promise((r) => setTimeout(r, 50));
    expect(errors).toEqual(['stream 5 opened twice']);
    expect(outside.destroyed).toBe(true);
  });

  it(`more than ${MAX_STREAMS} streams at once: the extra ones are closed at once, no connection made`, async () => {
    const { inside, outside } = pair();
    let made = 0;
    relayChannel(outside, () => {
      made += 1;
      return new PassThrough();
    });
    const seen = collect(inside);
    for (let id = 1; id <= MAX_STREAMS + 3; id++) inside.write(encodeFrame(FRAME_OPEN, id));
    await seen.wait(3);
    expect(made).toBe(MAX_STREAMS);
    expect(seen.frames).toEqual([MAX_STREAMS + 1, MAX_STREAMS + 2, MAX_STREAMS + 3].map((id) => [FRAME_CLOSE, id, '']));
  });

  it('DATA and CLOSE for a stream never opened are ignored', async () => {
    const { inside, outside } = pair();
    let made = 0;
    relayChannel(outside, () => {
      made += 1;
      return new PassThrough();
    });
    inside.write(encodeFrame(FRAME_DATA, 9, Buffer.from('x')));
    inside.write(encodeFrame(FRAME_CLOSE, 9));
    await new Promise((r) => setTimeout(r, 30));
    expect(made).toBe(0);
    expect(outside.destroyed).toBe(false);
  });
});
