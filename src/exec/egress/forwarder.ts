/**
 * The forwarder inside the sandbox: the system node, started as the sandbox's first process,
 * listens on the sandbox's own loopback at FORWARDER_PORT and carries each connection as one
 * stream over the egress channel, the descriptor it inherited (channel.ts: no path, so no other
 * process of the sandbox uid can reach the proxy). Then it runs the command as its child, with
 * the channel not passed on, and exits as the child did. Nothing else leaves the sandbox: its
 * network namespace has only `lo`.
 *
 * Passed as `node -e`, so no file of Warden's has to be visible inside. argv: descriptor, port,
 * then the command's argv. The frames are channel.ts's (type, id, length, payload).
 */
export const FORWARDER_PORT = 3128;

export const FORWARDER_SCRIPT = String.raw`
'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const [fd, port, file, ...args] = process.argv.slice(1);
const OPEN = 1, DATA = 2, CLOSE = 3, HEAD = 9, CHUNK = 65536, MAX = 1048576;
const fail = (why, code) => { process.stderr.write('warden egress forwarder: ' + why + '\n'); process.exit(code); };
const chan = new net.Socket({ fd: Number(fd), readable: true, writable: true });
const streams = new Map();
let next = 1, buffered = Buffer.alloc(0), full = false;
const frame = (type, id, payload) => {
  const head = Buffer.alloc(HEAD);
  head.writeUInt8(type, 0); head.writeUInt32BE(id, 1); head.writeUInt32BE(payload ? payload.length : 0, 5);
  return payload ? Buffer.concat([head, payload]) : head;
};
const send = (type, id, payload) => {
  if (chan.destroyed) return;
  if (!chan.write(frame(type, id, payload)) && !full) {
    full = true;
    for (const c of streams.values()) c.pause();
    chan.once('drain', () => { full = false; for (const c of streams.values()) c.resume(); });
  }
};
const waiting = new Set();
chan.on('data', (chunk) => {
  buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
  while (buffered.length >= HEAD) {
    const type = buffered.readUInt8(0), id = buffered.readUInt32BE(1), len = buffered.readUInt32BE(5);
    if ((type !== DATA && type !== CLOSE) || len > MAX) { chan.destroy(); for (const c of streams.values()) c.destroy(); return; }
    if (buffered.length < HEAD + len) break;
    const payload = buffered.subarray(HEAD, HEAD + len);
    buffered = buffered.subarray(HEAD + len);
    const c = streams.get(id);
    if (!c) continue;
    if (type === CLOSE) { c.end(); continue; }
    if (!c.write(payload) && !waiting.has(id)) {
      waiting.add(id); chan.pause();
      c.once('drain', () => { if (waiting.delete(id) && waiting.size === 0) chan.resume(); });
    }
  }
});
const gone = () => { for (const c of streams.values()) c.destroy(); };
chan.on('error', gone); chan.on('close', gone);
const server = net.createServer((client) => {
  const id = next++;
  streams.set(id, client);
  if (full) client.pause();
  send(OPEN, id);
  client.on('data', (d) => { for (let at = 0; at < d.length; at += CHUNK) send(DATA, id, d.subarray(at, at + CHUNK)); });
  client.on('error', () => client.destroy());
  client.once('close', () => {
    streams.delete(id);
    if (waiting.delete(id) && waiting.size === 0) chan.resume();
    send(CLOSE, id);
  });
});
server.on('error', (err) => fail(err.message, 126));
server.listen(Number(port), '127.0.0.1', () => {
  // The channel stays with the forwarder: the command's descriptors are 0-2 only.
  const child = spawn(file, args, { stdio: 'inherit' });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT']) process.on(sig, () => child.kill(sig));
  child.on('error', (err) => fail(err.message, 127));
  child.on('exit', (code, signal) => {
    server.close();
    chan.destroy();
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    else process.exit(code === null ? 1 : code);
  });
});
`;

/** The proxy variables a sandboxed command runs with (upper and lower case; tools read either). */
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${FORWARDER_PORT}`;
  const env: Record<string, string> = {};
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    env[name] = url;
    env[name.toLowerCase()] = url;
  }
  env.NO_PROXY = '';
  env.no_proxy = '';
  return env;
}
