import { checkUrl } from '../net/index.js';
import { EXIT, stringOption, type CommandRunner } from './args.js';
import { loadConfigForCommand, printResult } from './config.js';

/** `warden url-check URL [--tool web_fetch|browser]`: may this URL be fetched or navigated to? */
export const run: CommandRunner = async (args, io) => {
  const url = args.positionals[0] ?? args.rest[0];
  const tool = stringOption(args, 'tool') ?? 'web_fetch';
  if (!url) {
    io.stderr('usage: warden url-check URL [--tool web_fetch|browser] [--config FILE] [--json]');
    return EXIT.badInput;
  }
  if (tool !== 'web_fetch' && tool !== 'browser') {
    io.stderr(`warden url-check: --tool must be web_fetch or browser, not "${tool}"`);
    return EXIT.badInput;
  }
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) return EXIT.badInput;
  const verdict = await checkUrl(loaded.config, url, { surface: tool });
  printResult(args, io, { allowed: verdict.allowed, reason: verdict.reason, address: verdict.address ?? null }, () =>
    `${verdict.allowed ? 'allowed' : 'blocked'}: ${verdict.reason}${verdict.address ? ` (${verdict.address})` : ''}`,
  );
  return URL_VERDICT_EXIT(verdict.allowed);
};

/**
 * A script branches on the verdict as it does on `exec-check` and `access check`: 0 allowed,
 * 5 blocked. A blocked URL used to exit 0, so `warden url-check URL && curl URL` went ahead.
 */
export const URL_VERDICT_EXIT = (allowed: boolean): number => (allowed ? EXIT.ok : EXIT.deny);
