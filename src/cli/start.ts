import { ConfigError } from '../config/index.js';
import { startWarden } from '../gateway/startup.js';
import { log } from '../log.js';
import { EXIT, type CommandRunner } from './args.js';
import { loadConfigForCommand } from './config.js';

/**
 * `warden start`: runs the bot with every configured chat adapter (the web chat when no
 * platform token is configured) until SIGINT or SIGTERM, then stops gracefully. A second
 * signal while stopping exits at once.
 */
export const run: CommandRunner = async (args, io) => {
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) return EXIT.badInput;
  const started = await startWarden(loaded, { env: io.env });
  if (!started.ok) {
    const { error } = started;
    io.stderr(error instanceof ConfigError ? error.message : `warden start: ${error.message}`);
    return EXIT.badInput;
  }
  const { warden } = started;
  // The web chat's token is printed only when Warden made it; a configured one the operator already has.
  const web = warden.webToken?.source === 'config' ? `web chat at ${warden.webUrl} (open it with ?token=<channels.web.token>)` : `web chat at ${warden.webOpenUrl}`;
  const where = warden.webUrl ? web : warden.adapters.map((a) => a.provider).join(' and ');
  io.stdout(`Warden is running: ${where} (state in ${warden.dataDir}). Press Ctrl+C to stop.`);

  const signal = await nextSignal();
  io.stdout(`Received ${signal}; stopping…`);
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
  return EXIT.ok;
};

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
