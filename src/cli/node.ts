import path from 'node:path';
import { NODE_NAME } from '../control/nodes/protocol.js';
import { startNode } from '../node/start-node.js';
import { installProcessHandlers } from '../ops/process-handlers.js';
import { EXIT, stringOption, type CommandRunner } from './args.js';
import { loadConfigForCommand } from './config.js';

/**
 * `warden node --gateway URL --name NAME [--config FILE] [--state DIR] [--fingerprint SHA256]`:
 * runs this machine as a node of a running Warden until SIGINT/SIGTERM, or until the gateway
 * refuses or unpairs it (exit 1). Like `warden start`, it logs a promise rejection nothing
 * handled and keeps running; an uncaught exception ends it.
 */
export const run: CommandRunner = async (args, io) => {
  const uninstall = installProcessHandlers();
  try {
    return await serve(args, io);
  } finally {
    uninstall();
  }
};

const serve: CommandRunner = async (args, io) => {
  const gateway = stringOption(args, 'gateway');
  const name = stringOption(args, 'name');
  if (!gateway || !name) {
    io.stderr('usage: warden node --gateway ws://127.0.0.1:3003 --name NAME [--config FILE] [--state DIR] [--fingerprint SHA256]');
    return EXIT.badInput;
  }
  if (!NODE_NAME.test(name)) {
    io.stderr(`warden node: --name ${name}: 1–32 characters, a-z, 0-9, "-" and "_"`);
    return EXIT.badInput;
  }
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) return EXIT.badInput;
  const started = await startNode({
    gateway,
    name,
    loaded,
    stateDir: path.resolve(io.cwd, stringOption(args, 'state') ?? 'node-data'),
    fingerprint: stringOption(args, 'fingerprint'),
    say: io.stdout,
    env: io.env,
  });
  if (!started.ok) {
    io.stderr(`warden node: ${started.error}`);
    return EXIT.badInput;
  }
  const signal = new Promise<'signal'>((resolve) => {
    process.once('SIGINT', () => resolve('signal'));
    process.once('SIGTERM', () => resolve('signal'));
  });
  const outcome = await Promise.race([started.run.done, signal]);
  started.run.stop();
  await started.close();
  if (outcome === 'signal') return EXIT.ok;
  io.stderr(`warden node: ${outcome.reason}`);
  return outcome.ok ? EXIT.ok : EXIT.critical;
};
