import { spawn } from 'node:child_process';
import { ConfigError } from '../config/index.js';
import type { StartResult } from '../app/startup.js';
import { openWebChatFirst } from '../app/start-first.js';
import { log } from '../log/log.js';
import { releaseYoungGeneration } from '../ops/young-generation.js';
import { installProcessHandlers } from '../ops/process-handlers.js';
import { EXIT, type CommandRunner, type ParsedArgs } from './args.js';
import { loadConfigForCommand } from './config.js';
import { parsePort, PORT_ENV } from '../config/index.js';
import { background } from '../util/background.js';

// Only what comes before the web chat's listener is imported here; the rest of Warden (the store,
// the agent, the adapters, the tools, the metrics) is imported once the listener is open.

/** `--port N` is `WARDEN_PORT=N` (the web chat), `--ops-port N` is `WARDEN_OPS_PORT=N` (the ops listener). */
const PORT_FLAGS = { port: 'WARDEN_PORT', 'ops-port': 'WARDEN_OPS_PORT' } as const satisfies Record<string, keyof typeof PORT_ENV>;

export function portFlags(args: ParsedArgs): { ok: true; env: Record<string, string> } | { ok: false; message: string } {
  const env: Record<string, string> = {};
  for (const [flagName, envVar] of Object.entries(PORT_FLAGS)) {
    const value = args.options.get(flagName);
    if (value === undefined) continue;
    const port = value === true ? undefined : parsePort(value);
    if (port === undefined) return { ok: false, message: `warden start: --${flagName} needs a port number from 0 to 65535 (${PORT_ENV[envVar]})${value === true ? '' : `, got "${value}"`}` };
    env[envVar] = String(port);
  }
  return { ok: true, env };
}

/**
 * `warden start`: runs the bot with every configured chat adapter (the web chat when no
 * platform token is configured) until SIGINT or SIGTERM, then stops gracefully. A second
 * signal while stopping exits at once. A promise rejection nothing handled is logged and
 * counted, and Warden keeps running; an uncaught exception ends it (exit 1).
 */
export const run: CommandRunner = async (args, io) => {
  const uninstall = installProcessHandlers({
    countRejection: () => background(import('../ops/metrics.js').then(({ metrics }) => metrics.unhandledRejections.inc()), 'unhandled rejection not counted'),
  });
  try {
    return await serve(args, io);
  } finally {
    releaseYoungGeneration();
    uninstall();
  }
};

const serve: CommandRunner = async (args, given) => {
  const ports = portFlags(args);
  if (!ports.ok) {
    given.stderr(ports.message);
    return EXIT.badInput;
  }
  // The flags travel as the environment variables they stand for, so a config reload (which
  // reads the file again) keeps the ports this process was started with.
  const io = { ...given, env: { ...given.env, ...ports.env } };
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) return EXIT.badInput;
  const refuse = (error: Error) => {
    io.stderr(error instanceof ConfigError ? error.message : `warden start: ${error.message}`);
    return EXIT.badInput;
  };
  // The web chat's listener first: its page and health answer while the rest loads and starts
  // behind it. Whatever the config gets refused for, it is refused before anything listens.
  const first = await openWebChatFirst(loaded, io.env);
  if (!first.ok) return refuse(first.error);
  let restartRequested: (() => void) | undefined;
  const restart = new Promise<'restart'>((resolve) => (restartRequested = () => resolve('restart')));
  let started: StartResult;
  try {
    const { startWarden } = await import('../app/startup.js');
    started = await startWarden(loaded, {
      env: io.env,
      web: first.web,
      onRestart: () => restartRequested?.(),
      // What a reload changed, as the operator watching the terminal needs it.
      onConfigApplied: (o) =>
        io.stdout(`Config reloaded (version ${o.version}): ${o.changed.join(', ')}${o.widening.length ? ` — widens security: ${o.widening.map((w) => w.path).join(', ')}` : ''}${o.failed.length ? ` — not restarted: ${o.failed.join('; ')}` : ''}`),
    });
  } catch (err) {
    started = { ok: false, error: err as Error };
  }
  if (!started.ok) {
    // What waited for the chat is answered 503 (Retry-After), and the listener closes: the
    // process exits with the error, nothing left listening.
    await first.web?.listener.close();
    return refuse(started.error);
  }
  const { warden } = started;
  // The young generation was held small since the command was chosen (see src/cli.ts): start-up
  // is over once the tools a turn can call have loaded in the background.
  background(warden.preloaded.then(releaseYoungGeneration), 'young generation not released after start-up');
  // The web chat's token is printed only when Warden made it; a configured one the operator already has.
  const web = warden.webToken?.source === 'config' ? `web chat at ${warden.webUrl} (open it with ?token=<channels.web.token>)` : `web chat at ${warden.webOpenUrl}`;
  const where = warden.webUrl ? web : warden.adapters.map((a) => a.provider).join(' and ');
  // Listen for the stop signal before saying Warden runs: a supervisor (or a test) may send it the
  // moment it reads the line, and a signal without a listener kills the process at once.
  const stopSignal = nextSignal();
  io.stdout(`Warden is running: ${where} (state in ${warden.dataDir}). Press Ctrl+C to stop.`);

  const signal = await Promise.race([stopSignal, restart]);
  io.stdout(signal === 'restart' ? 'Restart requested by an owner; stopping…' : `Received ${signal}; stopping…`);
  const forceExit = () => {
    io.stderr('warden: second signal while stopping; exiting now');
    process.exit(130);
  };
  process.once('SIGINT', forceExit);
  process.once('SIGTERM', forceExit);
  try {
    await warden.stop();
  } catch (err) {
    log.error({ err }, 'shutdown failed');
    return EXIT.critical;
  } finally {
    process.off('SIGINT', forceExit);
    process.off('SIGTERM', forceExit);
  }
  io.stdout('Warden stopped.');
  if (signal === 'restart') return reexec(io);
  return EXIT.ok;
};

/**
 * The restart's second half: the same program with the same arguments, in the foreground, its
 * exit code passed on. This process stays as its parent so a supervisor keeps its pid, and hands
 * SIGINT/SIGTERM on.
 */
function reexec(io: Parameters<CommandRunner>[1]): Promise<number> {
  io.stdout('Starting again…');
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: process.env });
  const forward = (sig: NodeJS.Signals) => child.kill(sig);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve) => {
    child.on('exit', (code, sig) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (sig ? 128 : EXIT.critical));
    });
    child.on('error', (err) => {
      io.stderr(`warden: could not start again: ${err.message}`);
      resolve(EXIT.critical);
    });
  });
}

function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
