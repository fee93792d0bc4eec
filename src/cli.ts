import { parseArgs, processIO, type ParsedArgs, type CliIO, type CommandRunner, EXIT } from './cli/args.js';
import { closest } from './config/errors.js';
import { asksForHelp, COMMAND_USAGE } from './cli/usage.js';

/** In the build: `warden tools` as one script, relative to dist/cli.js (scripts/build.mjs). */
declare const WARDEN_TOOLS_SCRIPT: string | undefined;

/**
 * Command table. Each command lives in its own module under `cli/` and is loaded on demand, so
 * `warden tools` does not pay for the chat adapters' imports.
 */
export const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandRunner> }> = {
  tools: { summary: 'which tools the model gets in a context, and why not the others', load: async () => (await import('./cli/tools.js')).run },
  'url-check': { summary: 'may web_fetch or the browser reach this URL', load: async () => (await import('./cli/url-check.js')).run },
  'exec-check': { summary: 'would exec run this command, ask, or refuse it', load: async () => (await import('./cli/exec-check.js')).run },
  'exec-approvals': { summary: "import or export OpenClaw's exec-approvals.json allowlists", load: async () => (await import('./cli/exec-approvals.js')).run },
  access: { summary: 'who may make Warden act: the access decision for a sender in a context', load: async () => (await import('./cli/access.js')).run },
  audit: { summary: 'dangerous settings, each with a fix (exit 1 when critical)', load: async () => (await import('./cli/audit.js')).run },
  doctor: { summary: 'what is installed and reachable', load: async () => (await import('./cli/doctor.js')).run },
  skills: { summary: 'the skills of an agent: eligible, not eligible and why, not loaded', load: async () => (await import('./cli/skills.js')).run },
  plugins: { summary: 'the plugins: status, tools, hooks, commands and diagnostics', load: async () => (await import('./cli/plugins.js')).run },
  mcp: { summary: 'the MCP servers: state, tools, last error; one server\'s tools and their approvals', load: async () => (await import('./cli/mcp.js')).run },
  invoke: { summary: 'run one tool call through the surface and the whole call chain', load: async () => (await import('./cli/invoke.js')).run },
  usage: { summary: 'what the model calls used and cost: totals, by sender, channel, agent or model', load: async () => (await import('./cli/usage-report.js')).run },
  approvals: { summary: 'pending and decided approvals, allow-always grants; revoke and resolve', load: async () => (await import('./cli/approvals.js')).run },
  secrets: { summary: 'the secret store: list names, set a value (from a file or a variable), remove', load: async () => (await import('./cli/secrets.js')).run },
  node: { summary: 'run this machine as a node of a running Warden (pairs once, then answers calls)', load: async () => (await import('./cli/node.js')).run },
  discord: { summary: 'invite: the bot invite URL with the permissions, scopes and intents Warden needs', load: async () => (await import('./cli/setup.js')).discord },
  slack: { summary: 'manifest: a Slack app manifest (scopes, events, interactivity, /warden), Socket Mode or HTTP', load: async () => (await import('./cli/setup.js')).slack },
  start: {
    summary: 'run the bot: Discord and Slack when configured, the web chat otherwise',
    load: async () => {
      // Before its code loads: an idle bot keeps the young generation its start-up grew.
      (await import('./ops/young-generation.js')).holdYoungGeneration();
      return (await import('./cli/start.js')).run;
    },
  },
};

/** Commands that run until stopped: their young generation is sized for the traffic, not the start. */
const LONG_RUNNING = new Set(['start', 'node']);

const USAGE = () =>
  [
    'usage: warden <command> [options]',
    '',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(15)} ${c.summary}`),
    '',
    'Read-only commands take --config FILE (default warden.config.yaml) and --json.',
    'warden COMMAND --help (or -h) prints its usage.',
  ].join('\n');

export async function main(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  const args = parseArgs(argv);
  // `warden help COMMAND` is `warden COMMAND --help`.
  const helpFor = args.command === 'help' ? args.positionals[0] : asksForHelp(args) && args.command !== '-h' ? args.command : undefined;
  if (helpFor !== undefined && COMMANDS[helpFor]) {
    // Answered here, before the command's module runs: help has no side effects (no config read, no store, no listener).
    io.stdout(COMMAND_USAGE[helpFor] ?? `usage: warden ${helpFor} [options]`);
    return EXIT.ok;
  }
  if (args.command === undefined || args.command === 'help' || args.command === '-h') {
    // Asking for help is an answer; running `warden` with nothing is a usage error.
    const asked = args.command === 'help' || args.command === '-h' || args.options.has('help');
    (asked ? io.stdout : io.stderr)(USAGE());
    return asked ? EXIT.ok : EXIT.badInput;
  }
  const command = COMMANDS[args.command];
  if (!command) {
    const hint = closest(args.command, Object.keys(COMMANDS));
    io.stderr(`warden: unknown command "${args.command}"${hint ? ` (did you mean "${hint}"?)` : ''}\n${USAGE()}`);
    return EXIT.badInput;
  }
  if (args.command === 'tools' && typeof WARDEN_TOOLS_SCRIPT === 'string') return runToolsScript(new URL(WARDEN_TOOLS_SCRIPT, import.meta.url), args, io);
  // Loaded here, not at the top: `warden --help` answers without the logger and its redaction.
  // Set before the command's modules load, so nothing they log escapes the command's level.
  (await import('./log/log.js')).setCommandLogLevel(args.command);
  if (!LONG_RUNNING.has(args.command)) {
    // A command that answers and exits keeps nothing: fewer, larger scavenges while it loads;
    // and it parses each config section once, so zod's compiled fast paths would not pay off.
    const [young, oneShot] = await Promise.all([import('./ops/young-generation.js'), import('./config/schema/one-shot.js')]);
    young.growYoungGenerationFast();
    oneShot.parseWithoutCodeGeneration();
  }
  const run = await command.load();
  return run(args, io);
}

/**
 * A built `warden tools`: the command and everything it loads in one script, compiled from V8's
 * code cache of the previous run (src/util/cached-script.ts), where the modules would each be
 * resolved, read, linked and compiled from their text (src/cli/tools-entry.ts sets the logger's
 * level and zod's settings, as the lines above do for the other commands). The cache is written beside dist/ once the command
 * is done, when there was none or V8 refused it.
 */
async function runToolsScript(script: URL, args: ParsedArgs, io: CliIO): Promise<number> {
  const [{ loadCachedScript }, young] = await Promise.all([import('./util/cached-script.js'), import('./ops/young-generation.js')]);
  // Before the script compiles, as V8 compares the flags a code cache was written under with the
  // current ones (a flag set after the compile made every cache written at exit unusable).
  young.growYoungGenerationFast();
  const loaded = loadCachedScript<{ runTools: CommandRunner }>(script, new URL('../cache/', script));
  if (!loaded.fromCache) process.once('exit', loaded.saveCache);
  return loaded.exports.runTools(args, io);
}
