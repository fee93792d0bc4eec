import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { describePortInUse, listenerOf, nextFreePort, OPS_PORT, portInUseText, WEB_CHAT_PORT } from './port-clash.js';

const open: Server[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function listen(port = 0): Promise<number> {
  const server = createServer();
  open.push(server);
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

describe('a taken port, as the operator reads it', () => {
  it.each([
    ['the web chat, holder and next port known', WEB_CHAT_PORT, 3000, { holder: 'node (pid 42)', free: 3001 },
      'the web chat cannot listen on 127.0.0.1:3000: the port is in use by node (pid 42). Set channels.web.port, --port N or WARDEN_PORT=N; 3001 is free: warden start --port 3001 (or WARDEN_PORT=3001).'],
    ['the ops listener, holder not readable', OPS_PORT, 3004, { free: 3005 },
      'the ops listener cannot listen on 127.0.0.1:3004: the port is in use. Set ops.port, --ops-port N or WARDEN_OPS_PORT=N; 3005 is free: warden start --ops-port 3005 (or WARDEN_OPS_PORT=3005).'],
    ['nothing free nearby', WEB_CHAT_PORT, 3000, {},
      'the web chat cannot listen on 127.0.0.1:3000: the port is in use. Set channels.web.port, --port N or WARDEN_PORT=N.'],
  ] as const)('%s', (_name, setting, port, found, text) => {
    expect(portInUseText(setting, { host: '127.0.0.1', port }, found)).toBe(text);
  });

  it('finds the process listening through /proc (this one) and a free port after the taken one', async () => {
    const port = await listen();
    expect(listenerOf(port)).toMatch(new RegExp(`^\\S.* \\(pid ${process.pid}\\)$`));
    const free = await nextFreePort('127.0.0.1', port);
    expect(free).toBeGreaterThan(port);
    // The offered port really is free: listening on it works.
    await expect(listen(free)).resolves.toBe(free);
  });

  it('names the holder and the next free port in one sentence', async () => {
    const port = await listen();
    const text = await describePortInUse(WEB_CHAT_PORT, { host: '127.0.0.1', port });
    expect(text).toMatch(new RegExp(`^the web chat cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use by .+ \\(pid ${process.pid}\\)\\. Set channels\\.web\\.port, --port N or WARDEN_PORT=N; (\\d+) is free: warden start --port \\1 \\(or WARDEN_PORT=\\1\\)\\.$`));
  });

  it('says nothing about a holder when no socket listens on the port', () => {
    expect(listenerOf(1)).toBeUndefined();
  });
});
