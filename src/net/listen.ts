import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { registerServer } from './own-listeners.js';

type Listener = HttpServer | HttpsServer;

/**
 * Registers `server` as one of Warden's own listeners (so the URL check refuses it) and listens;
 * rejects with the bind error (port taken, address not local) instead of emitting it.
 */
export async function listenOwn(server: Listener, name: string, port: number, host: string): Promise<void> {
  registerServer(server, name);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** `scheme://host:port` of a listening server (IPv6 in brackets); undefined when it is not listening. */
export function serverUrl(server: Listener | undefined, scheme: string): string | undefined {
  const a = server?.address() as AddressInfo | null | undefined;
  return a ? `${scheme}://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` : undefined;
}

/** Stops listening, dropping open keep-alive connections so the close does not wait on them. */
export async function closeServer(server: Listener | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
