import type { WardenConfig } from '../config/index.js';
import { resolveBinding, type BindingDecision } from '../gateway/bindings.js';
import { buildTurnContext } from '../turn/turn-context.js';
import type { ChatType, TurnContext } from '../policy/context.js';
import { defaultAgentId, knownAgentIds } from '../policy/steps.js';
import { stringOption, type ParsedArgs } from './args.js';
// The usage text lives apart, so `warden --help` prints it without loading the policy code.
export { CONTEXT_USAGE } from './context-usage.js';

/**
 * Context flags → TurnContext, shared by `tools`, `exec-check` and `invoke`.
 *
 *   --agent ID            agent of `agents.list` (default: the one `bindings` route this
 *                         conversation to, as for a message — else the default agent)
 *   --provider P          discord | slack | web | http (the HTTP tools API) (default web)
 *   --chat T              dm | channel | thread (default: thread with --thread, channel with a
 *                         guild or channel, else dm)
 *   --guild ID            Discord guild or Slack team; --guild-name NAME for slug-keyed guilds
 *   --channel ID          the channel; for a thread, its PARENT channel (threads follow it)
 *   --channel-name NAME   the channel's name (`general` or `#general`)
 *   --thread ID           the thread id (implies --chat thread)
 *   --sender ID           platform user id; owner status follows from `owners`
 *   --sender-name N, --sender-username U   for `name:` / `username:` toolsBySender keys
 *   --roles ID,ID         the sender's Discord role ids (role bindings, `role:` entries)
 *   --usergroups ID,ID    the sender's Slack user group ids (`usergroup:` entries)
 *   --model P/M           model answering the turn (default: the agent's, else models.default)
 *   --spawn-depth N       0 for a main session, n for an n-th level subagent
 *
 * The flags describe the conversation and the sender; the context itself comes from the same
 * builder the running bot uses for every message, so owner status (`owners`, and the web chat's
 * local user `local`), whether the model can call tools and whether exec is sandboxed
 * (`tools.exec.host`, default: sandbox when bubblewrap is installed) are derived the same way.
 */
export const CONTEXT_FLAGS = [
  'agent',
  'provider',
  'chat',
  'guild',
  'guild-name',
  'channel',
  'channel-name',
  'thread',
  'sender',
  'sender-name',
  'sender-username',
  'roles',
  'usergroups',
  'model',
  'spawn-depth',
] as const;

/** The context flags as a usage block, for each command's --help. */

const PROVIDERS = ['discord', 'slack', 'web', 'http'] as const;
const CHATS: readonly ChatType[] = ['dm', 'channel', 'thread'];

/** `binding`: how the agent was chosen when `--agent` was not given (the router's decision). */
export type ContextResult = { ok: true; ctx: TurnContext; binding?: BindingDecision | undefined } | { ok: false; problems: string[] };

export function contextFromArgs(args: ParsedArgs, config: WardenConfig): ContextResult {
  const problems: string[] = [];
  const value = (name: (typeof CONTEXT_FLAGS)[number]): string | undefined => {
    const v = args.options.get(name);
    if (v === true) {
      problems.push(`--${name} needs a value`);
      return undefined;
    }
    return stringOption(args, name)?.trim() || undefined;
  };

  const provider = value('provider') ?? 'web';
  if (!(PROVIDERS as readonly string[]).includes(provider)) problems.push(`--provider: expected one of ${PROVIDERS.join(', ')}, got "${provider}"`);

  const guildId = value('guild');
  const guildName = value('guild-name');
  const channelId = value('channel');
  const channelName = value('channel-name')?.replace(/^#/, '');
  const threadId = value('thread');
  const chatFlag = value('chat');
  let chat: ChatType;
  if (chatFlag !== undefined) {
    if (!(CHATS as readonly string[]).includes(chatFlag)) problems.push(`--chat: expected one of ${CHATS.join(', ')}, got "${chatFlag}"`);
    chat = chatFlag as ChatType;
  } else chat = threadId ? 'thread' : guildId || guildName || channelId || channelName ? 'channel' : 'dm';
  if (chat === 'thread' && !channelId && !channelName) problems.push('--chat thread: give the parent channel with --channel or --channel-name');
  if (threadId && chat !== 'thread') problems.push(`--thread applies to --chat thread, not --chat ${chat}`);
  if (chat === 'dm' && (guildId || guildName)) problems.push('--guild does not apply to --chat dm');
  const roles = value('roles')?.split(',').map((r) => r.trim()).filter(Boolean);
  const usergroups = value('usergroups')?.split(',').map((r) => r.trim()).filter(Boolean);

  // The agent a message from here would reach: the router's own binding decision.
  const explicitAgent = value('agent');
  const binding = explicitAgent === undefined ? resolveBinding(config, { provider, chat, guildId, channelId, threadId, senderId: value('sender'), roles }) : undefined;
  const agentId = explicitAgent ?? binding?.agentId ?? defaultAgentId(config);
  const known = knownAgentIds(config);
  if (!known.includes(agentId)) problems.push(`--agent: unknown agent "${agentId}"; known agents: ${known.join(', ')}`);

  const agentModel = config.agents.list.find((a) => a.id === agentId)?.model;
  const model = value('model') ?? agentModel ?? config.models.default;
  if (model !== undefined && !/^[a-z0-9][a-z0-9._-]*\/.+$/i.test(model)) problems.push(`--model: expected "provider/model", got "${model}"`);

  const depthText = value('spawn-depth');
  let spawnDepth = 0;
  if (depthText !== undefined) {
    if (!/^\d+$/.test(depthText)) problems.push(`--spawn-depth: expected a whole number ≥ 0, got "${depthText}"`);
    else spawnDepth = Number(depthText);
  }

  const senderId = value('sender');
  const senderName = value('sender-name');
  const senderUsername = value('sender-username');
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    ...(binding ? { binding } : {}),
    ctx: buildTurnContext(config, {
      agentId,
      conversation: { provider, chat, guildId, guildName, channelId, channelName, threadId },
      sender: { id: senderId, name: senderName, username: senderUsername, roleIds: roles, usergroupIds: usergroups },
      model,
      spawnDepth,
    }),
  };
}

/** Options a command does not know, as problems (`--chanel` → did you mean). */
export function unknownFlagProblems(args: ParsedArgs, known: readonly string[], closest: (word: string, candidates: readonly string[]) => string | undefined): string[] {
  const problems: string[] = [];
  for (const name of args.options.keys()) {
    if (known.includes(name)) continue;
    const hint = closest(name, known);
    problems.push(`unknown option --${name}${hint ? ` (did you mean --${hint}?)` : ''}`);
  }
  return problems;
}
