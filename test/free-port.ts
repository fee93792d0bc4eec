// A loopback port free right now, for a server a test or bench starts a moment later (a fake, an
// instance's receiver or ops port, a PostgreSQL cluster). Another process may take it in between;
// on a test machine that is rare enough not to matter.
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
