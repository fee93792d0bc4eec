/**
 * The forwarder inside the sandbox: the system node, started as the sandbox's first process,
 * listens on the sandbox's own loopback at FORWARDER_PORT and relays each connection to the
 * egress proxy's Unix socket (bound into the sandbox at PROXY_SOCKET_IN_SANDBOX). Then it runs
 * the command as its child and exits as the child did. Nothing else leaves the sandbox: its
 * network namespace has only `lo`.
 *
 * Passed as `node -e`, so no file of Warden's has to be visible inside. argv: socket, port,
 * then the command's argv.
 */
export const PROXY_SOCKET_IN_SANDBOX = '/run/warden-egress.sock';
export const FORWARDER_PORT = 3128;

export const FORWARDER_SCRIPT = String.raw`
'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const [sock, port, file, ...args] = process.argv.slice(1);
const server = net.createServer((client) => {
  const up = net.connect(sock);
  client.pipe(up); up.pipe(client);
  const done = () => { client.destroy(); up.destroy(); };
  client.on('error', done); up.on('error', done); client.on('close', done); up.on('close', done);
});
server.on('error', (err) => { process.stderr.write('warden egress forwarder: ' + err.message + '\n'); process.exit(126); });
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(file, args, { stdio: 'inherit' });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT']) process.on(sig, () => child.kill(sig));
  child.on('error', (err) => { process.stderr.write('warden egress forwarder: ' + err.message + '\n'); process.exit(127); });
  child.on('exit', (code, signal) => {
    server.close();
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
