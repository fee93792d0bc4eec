import { loadConfig, type LoadedConfig } from '../config/index.js';
import { stringOption, type CliIO, type ParsedArgs } from './args.js';

/**
 * Loads `--config FILE` (default warden.config.yaml) for a command. On failure prints every
 * problem with its key path to stderr and returns undefined; the command then exits 2.
 */
export function loadConfigForCommand(args: ParsedArgs, io: CliIO): LoadedConfig | undefined {
  const given = args.options.get('config');
  if (given === true) {
    io.stderr('warden: --config needs a file path');
    return undefined;
  }
  const result = loadConfig({ file: stringOption(args, 'config'), cwd: io.cwd, env: io.env });
  if (!result.ok) {
    io.stderr(result.error.message);
    return undefined;
  }
  return result.value;
}

/** Prints a value as JSON (with --json) or as the given human text. */
export function printResult(args: ParsedArgs, io: CliIO, value: unknown, human: () => string): void {
  io.stdout(args.options.get('json') === true ? JSON.stringify(value, null, 2) : human());
}
