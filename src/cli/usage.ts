import { EXIT, type ParsedArgs } from './args.js';
import { CONTEXT_USAGE } from './context-usage.js';

/**
 * Every command's usage, in one place: `warden COMMAND --help` (or `-h`, or `warden help
 * COMMAND`) prints it from here and exits 0 before the command's module runs, so asking for
 * help never loads a config, opens the store, creates the data dir or listens on a port.
 */

const CONTEXT = CONTEXT_USAGE;

/** What the CLI contract's exit codes mean, per command that answers with more than 0/2. */
const ANSWERED = `${EXIT.ok} answered`;
const BAD = `${EXIT.badInput} bad config or flags`;
const NO_TOOLS = `${EXIT.noTools} no callable tool remains (empty-allowlist guard)`;

export const COMMAND_USAGE: Record<string, string> = {
  tools: ['usage: warden tools [--config FILE] [--json] [--explain TOOL] [context flags]', CONTEXT, `exit: ${ANSWERED}, ${BAD}, ${NO_TOOLS}`].join('\n'),
  'url-check': ['usage: warden url-check URL [--tool web_fetch|browser] [--config FILE] [--json]', `exit: ${EXIT.ok} allowed, ${EXIT.deny} blocked, ${BAD}`].join('\n'),
  'exec-check': [
    'usage: warden exec-check [--config FILE] [--json] [context flags] -- COMMAND',
    CONTEXT,
    `exit: ${EXIT.ok} allow, ${EXIT.ask} ask, ${EXIT.deny} deny, ${BAD}, ${NO_TOOLS}`,
  ].join('\n'),
  'exec-approvals': 'usage: warden exec-approvals import FILE [--agent ID] [--dry-run] [--json] | export [--agent ID] [--config FILE]',
  access: [
    'usage: warden access check [--bot] [--mentions] [--paired] [--config FILE] [--json] [context flags]',
    CONTEXT,
    '         --bot: the message is from a bot or webhook; --mentions: it mentions this bot (allowBots: "mentions"); --paired: the sender was paired by an owner (dmPolicy: pairing)',
    `exit: ${EXIT.ok} let in, ${EXIT.ask} asked to pair (dmPolicy: pairing), ${EXIT.deny} refused, ${BAD}`,
  ].join('\n'),
  audit: ['usage: warden audit [--config FILE] [--json]', `exit: ${EXIT.ok} no critical finding, ${EXIT.critical} a critical finding, ${BAD}`].join('\n'),
  doctor: 'usage: warden doctor [--config FILE] [--json] [--timeout SECONDS]',
  skills: 'usage: warden skills [--agent ID] [--config FILE] [--json]',
  plugins: 'usage: warden plugins [--config FILE] [--json]',
  mcp: 'usage: warden mcp list [--config FILE] [--json]\n       warden mcp tools NAME [--config FILE] [--json]',
  invoke: [
    'usage: warden invoke TOOL [--args JSON] [--approve once|always|deny] [--session KEY] [--config FILE] [--json] [context flags]',
    CONTEXT,
    `exit: ${EXIT.ok} the tool ran, ${EXIT.ask} waiting on an approval, ${EXIT.deny} refused by policy (blocked, denied, approval refused or expired), ${EXIT.toolError} the tool failed, ${BAD}, ${NO_TOOLS}`,
  ].join('\n'),
  usage: [
    'usage: warden usage [--since DATE|ISO-TIME|7d|24h] [--by sender|channel|agent|model] [--json | --csv] [--config FILE]',
    'default --since: the start of this month in budgets.timeZone; costs in USD with their price sources',
    `exit: ${ANSWERED}, ${BAD}`,
  ].join('\n'),
  secrets: [
    'usage: warden secrets list [--agent ID] [--config FILE] [--json]',
    '       warden secrets set NAME (--value-file FILE | --from-env VAR) [--agent ID] [--session KEY] [--config FILE]',
    '       warden secrets rm NAME [--agent ID] [--session KEY] [--config FILE]',
  ].join('\n'),
  approvals: [
    'usage: warden approvals list|history|grants [--session KEY] [--limit N] [--all] [--config FILE] [--json]',
    '       warden approvals revoke GRANT_ID [--config FILE]',
    '       warden approvals resolve ID allow-once|allow-always|deny [--config FILE]',
  ].join('\n'),
  node: 'usage: warden node --gateway ws://127.0.0.1:3003 --name NAME [--config FILE] [--state DIR] [--fingerprint SHA256]',
  discord: 'usage: warden discord invite [--client-id ID] [--config FILE] [--json]',
  slack: 'usage: warden slack manifest [--mode socket|http] [--url https://HOST/slack/events] [--name NAME]',
  start: ['usage: warden start [--config FILE] [--port N] [--ops-port N]', 'runs the bot until SIGINT or SIGTERM', '--port N (or WARDEN_PORT) moves the web chat (channels.web.port); --ops-port N (or WARDEN_OPS_PORT) the ops listener (ops.port)', `exit: ${EXIT.ok} stopped, ${BAD} (nothing started), ${EXIT.critical} shutdown failed`].join('\n'),
};

/**
 * Whether the command line asks for help: `--help`, or `-h` as a word of its own (not the value
 * of a flag, `--channel-name -h`, and not after `--`, where the command being checked begins).
 */
export function asksForHelp(args: ParsedArgs): boolean {
  return args.options.get('help') === true || args.command === '-h' || args.positionals.includes('-h');
}
