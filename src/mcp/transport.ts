import { existsSync } from 'node:fs';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Resolver } from '../net/check.js';
import type { OwnListener } from '../net/own-listeners.js';
import { mcpChildEnv, resolveCommand } from './env.js';
import { guardedMcpFetch } from './http-fetch.js';
import type { ServerSettings } from './settings.js';

/**
 * The SDK transport for one server. stdio: the child gets the minimal environment of env.ts
 * and, on Linux, is started under `setpriv --pdeathsig KILL`, so it dies with Warden even when
 * Warden is killed outright (a graceful stop closes it first: stdin, then SIGTERM, then
 * SIGKILL). HTTP: every request goes through the guarded fetch (http-fetch.ts).
 */

export interface TransportSeams {
  /** The environment the child's base variables are read from (default: Warden's). */
  env?: NodeJS.ProcessEnv | undefined;
  resolve?: Resolver | undefined;
  dial?: ((address: string) => string) | undefined;
}

export type OpenedTransport =
  | { ok: true; transport: Transport; stderrTail: () => string; pid: () => number | null | undefined }
  | { ok: false; error: string };

const SETPRIV = '/usr/bin/setpriv';
const STDERR_TAIL = 2_000;

export function openTransport(settings: ServerSettings, deps: { ownListeners: readonly OwnListener[]; seams?: TransportSeams | undefined }): OpenedTransport {
  const launch = settings.launch;
  if (launch.kind === 'http') {
    const fetch = guardedMcpFetch({
      url: launch.url,
      allowPrivateNetwork: launch.allowPrivateNetwork,
      ownListeners: deps.ownListeners,
      connectTimeoutMs: settings.connectTimeoutMs,
      resolve: deps.seams?.resolve,
      dial: deps.seams?.dial,
    });
    const transport = new StreamableHTTPClientTransport(new URL(launch.url), {
      fetch,
      requestInit: { headers: launch.headers },
      // Warden reconnects the whole session itself (connection.ts).
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
    });
    return { ok: true, transport, stderrTail: () => '', pid: () => undefined };
  }
  const env = mcpChildEnv(deps.seams?.env ?? process.env, launch.env);
  const resolved = resolveCommand(launch.command, env.PATH, launch.cwd);
  if (!resolved) return { ok: false, error: `command ${launch.command} not found${launch.command.includes('/') ? '' : ' on PATH'}` };
  const dieWithWarden = process.platform === 'linux' && existsSync(SETPRIV);
  const transport = new StdioClientTransport({
    command: dieWithWarden ? SETPRIV : resolved,
    args: dieWithWarden ? ['--pdeathsig', 'KILL', '--', resolved, ...launch.args] : launch.args,
    env,
    cwd: launch.cwd,
    stderr: 'pipe',
  });
  let tail = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-STDERR_TAIL);
  });
  return { ok: true, transport, stderrTail: () => tail.trim(), pid: () => transport.pid };
}
