import type { CommandRunner } from './args.js';
import { setCommandLogLevel } from '../log/log.js';
import { parseWithoutCodeGeneration } from '../config/schema/one-shot.js';
import { run } from './tools.js';

/**
 * `warden tools` with the set-up `main` gives a command that answers and exits, in one module:
 * the build compiles it, with everything it imports, into the one script that a built `warden
 * tools` runs from V8's code cache (see src/util/cached-script.ts). The logger's level and
 * zod's settings live in that script's own copies of those modules, so they are set from here
 * (the young generation's growth is the process's, set by src/cli.ts before the script compiles).
 */
export const runTools: CommandRunner = (args, io) => {
  setCommandLogLevel('tools');
  parseWithoutCodeGeneration();
  return run(args, io);
};
