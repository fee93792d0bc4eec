// For tests: a loopback HTTP server that records what it was sent, closed after each test.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const open: Server[] = [];

/** Closes `server` with the others at `closeTestServers`. */
export function closedAfterTest(server: Server): Server {
  open.push(server);
  return server;
}

/** For `afterEach`: closes every server started since, connections included. */
export async function closeTestServers(): Promise<void> {
  for (const s of open.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
}

/** A loopback HTTP server answering with `handler`; `seen` is what it was sent, `closed()` how many responses were closed. */
export async function serve(handler: Handler): Promise<{ url: string; seen: Seen[]; closed: () => number }> {
  const seen: Seen[] = [];
  let closed = 0;
  const server = closedAfterTest(
    createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        handler(req, body, res);
      });
      res.on('close', () => closed++);
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, closed: () => closed };
}
