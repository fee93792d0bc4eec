import { closest } from '../config/errors.js';
import { accessSettings, decideAccess, describeAccess } from '../policy/access.js';
import { EXIT, type CommandRunner } from './args.js';
import { loadConfigForCommand } from './config.js';
import { CONTEXT_FLAGS, contextFromArgs, unknownFlagProblems } from './context.js';
import { COMMAND_USAGE } from './usage.js';

/**
 * `warden access check`: whether a sender in a conversation may make Warden act, and which key
 * decided — the decision the running bot's access gate takes for a message (`decideAccess`),
 * from the same context flags as `warden tools`. Rate limits and the bot loop breaker count
 * live traffic and are not judged here.
 */

const FLAGS = ['config', 'json', 'help', 'bot', 'mentions', 'paired', ...CONTEXT_FLAGS];
const USAGE = COMMAND_USAGE.access!;

export const run: CommandRunner = async (args, io) => {
  if (args.options.get('help') === true) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  const problems = unknownFlagProblems(args, FLAGS, closest);
  const [sub, ...rest] = args.positionals;
  if (sub !== 'check') problems.push(sub === undefined ? 'expected a subcommand: check' : `unknown subcommand "${sub}"; expected: check`);
  if (rest.length > 0) problems.push(`unexpected argument${rest.length > 1 ? 's' : ''}: ${rest.join(' ')}`);
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) {
    if (problems.length > 0) io.stderr(problems.map((p) => `warden access: ${p}`).join('\n'));
    return EXIT.badInput;
  }
  const { config } = loaded;
  const context = contextFromArgs(args, config);
  if (!context.ok) problems.push(...context.problems);
  if (problems.length > 0 || !context.ok) {
    io.stderr(problems.map((p) => `warden access: ${p}`).join('\n'));
    return EXIT.badInput;
  }
  const ctx = context.ctx;
  const isBot = args.options.get('bot') === true;
  const where = { provider: ctx.provider, chat: ctx.chat, guildId: ctx.guildId, guildName: ctx.guildName, channelId: ctx.channelId, channelName: ctx.channelName };
  const decision = decideAccess(config, where, {
    provider: ctx.provider,
    userId: ctx.senderId ?? '',
    roleIds: ctx.senderRoleIds,
    usergroupIds: ctx.senderUsergroupIds,
    isBot,
    isOwner: ctx.senderIsOwner && !isBot,
    paired: args.options.get('paired') === true,
    mentionsBot: args.options.get('mentions') === true,
  });
  const settings = accessSettings(config, where);
  const code = decision.allowed ? EXIT.ok : decision.reason === 'pairing-required' ? EXIT.ask : EXIT.deny;
  if (args.options.get('json') === true) {
    io.stdout(JSON.stringify({ decision, settings }, null, 2));
    return code;
  }
  const lines = [
    describeAccess(decision),
    `dmPolicy: ${settings.dmPolicy.value} (${settings.dmPolicy.path})`,
    `groupPolicy: ${settings.groupPolicy.value} (${settings.groupPolicy.path})`,
    `allowBots: ${settings.allowBots.value} (${settings.allowBots.path})`,
  ];
  if (!decision.allowed) lines.push(`the sender is told: ${decision.reply === 'none' ? 'nothing' : decision.reply === 'pairing' ? 'a pairing code' : 'the refusal (deniedReply)'}`);
  io.stdout(lines.join('\n'));
  return code;
};
