import type { BindingEntry, WardenConfig } from '../config/index.js';
import type { ChatType } from '../policy/context.js';
import { defaultAgentId, knownAgentIds } from '../policy/steps.js';

/**
 * Which agent answers a message: OpenClaw's route bindings (`bindings`, its `resolveAgentRoute`).
 * One pure function, used by the router for every inbound message and by `warden tools` for its
 * context flags, so the CLI and the bot pick the same agent. A binding only picks the agent:
 * mention gating, the tool policy and approvals are decided afterwards, as for any message.
 *
 * Tiers, most specific first; within a tier the first binding in config order wins:
 *   binding.peer           the conversation itself (a DM's sender, a channel, a thread)
 *   binding.peer.parent    a thread's parent channel
 *   binding.peer.wildcard  `peer: { kind, id: "*" }`
 *   binding.guild+roles    a Discord guild and one of the sender's roles
 *   binding.guild          a Discord guild
 *   binding.team           a Slack workspace
 *   binding.account        the platform's (one) account, `accountId` omitted or `default`
 *   binding.channel        the platform, `accountId: "*"`
 *   default                no binding matched: the default agent
 * Within a binding every field given must match (AND).
 */

/** Where a message arrived and who sent it: what bindings are matched against. */
export interface BindingInput {
  provider: string;
  chat: ChatType;
  /** Discord guild or Slack team id. */
  guildId?: string | undefined;
  /** The conversation: DM channel, guild or Slack channel, or a thread's parent channel. */
  channelId?: string | undefined;
  threadId?: string | undefined;
  senderId?: string | undefined;
  /** Discord role ids of the sender in the guild. */
  roles?: readonly string[] | undefined;
}

export type BindingTier =
  | 'binding.peer'
  | 'binding.peer.parent'
  | 'binding.peer.wildcard'
  | 'binding.guild+roles'
  | 'binding.guild'
  | 'binding.team'
  | 'binding.account'
  | 'binding.channel'
  | 'default';

export interface BindingDecision {
  agentId: string;
  matchedBy: BindingTier;
  /** The index in `bindings` of the binding that decided; absent for `default`. */
  index?: number | undefined;
}

/** Warden runs one account per platform; OpenClaw calls an account without a name `default`. */
const ACCOUNT = 'default';

type Peer = { kind: 'direct' | 'channel'; id: string };

const norm = (v: string | undefined) => (v ?? '').trim();
const platformOf = (channel: string) => (channel === 'webchat' ? 'web' : channel);
/** OpenClaw treats `group` and `channel` as one kind for matching; so does Warden. */
const kindOf = (kind: string): Peer['kind'] => (kind === 'direct' ? 'direct' : 'channel');

/** The peer of a message and, in a thread, its parent (OpenClaw's `peer` / `parentPeer`). */
function peersOf(input: BindingInput): { peer: Peer | undefined; parent: Peer | undefined } {
  if (input.chat === 'dm') return { peer: input.senderId ? { kind: 'direct', id: norm(input.senderId) } : undefined, parent: undefined };
  const channel = input.channelId ? { kind: 'channel' as const, id: norm(input.channelId) } : undefined;
  if (input.chat === 'thread' && input.threadId) return { peer: { kind: 'channel', id: norm(input.threadId) }, parent: channel };
  return { peer: channel, parent: undefined };
}

/** A platform's guild scope: Discord guilds and Slack teams both arrive as `guildId`. */
function spaces(input: BindingInput): { guildId: string; teamId: string } {
  const id = norm(input.guildId);
  return input.provider === 'slack' ? { guildId: '', teamId: id } : { guildId: input.provider === 'discord' ? id : '', teamId: '' };
}

function tierOf(b: BindingEntry): Exclude<BindingTier, 'binding.peer.parent' | 'default'> {
  const m = b.match;
  if (m.peer) return norm(m.peer.id) === '*' ? 'binding.peer.wildcard' : 'binding.peer';
  if (m.guildId && m.roles && m.roles.length > 0) return 'binding.guild+roles';
  if (m.guildId) return 'binding.guild';
  if (m.teamId) return 'binding.team';
  return norm(m.accountId) === '*' ? 'binding.channel' : 'binding.account';
}

/** Every field the binding gives must match (OpenClaw's `matchesBindingScope`, AND). */
function matches(b: BindingEntry, peer: Peer | undefined, input: BindingInput): boolean {
  const m = b.match;
  if (m.peer) {
    if (!peer || kindOf(m.peer.kind) !== peer.kind) return false;
    if (norm(m.peer.id) !== '*' && norm(m.peer.id) !== peer.id) return false;
  }
  const { guildId, teamId } = spaces(input);
  if (m.guildId && m.guildId !== guildId) return false;
  if (m.teamId && m.teamId !== teamId) return false;
  if (m.roles && m.roles.length > 0 && !m.roles.some((r) => (input.roles ?? []).includes(r))) return false;
  return true;
}

/** The configured spelling of an agent id, or undefined when no such agent exists. */
function configuredAgent(config: WardenConfig, id: string): string | undefined {
  const wanted = id.trim().toLowerCase();
  return knownAgentIds(config).find((a) => a.toLowerCase() === wanted);
}

/** The agent a message goes to, and which binding (and tier) decided. Pure. */
export function resolveBinding(config: WardenConfig, input: BindingInput): BindingDecision {
  // No bindings (the common setup): the default agent, without building each tier's matcher per message.
  if (config.bindings.length === 0) return { agentId: defaultAgentId(config), matchedBy: 'default' };
  const provider = norm(input.provider).toLowerCase();
  // Only this platform's bindings for Warden's one account: omitted / `default` names it, `*` is any.
  const candidates = config.bindings
    .map((binding, index) => ({ binding, index }))
    .filter(({ binding }) => platformOf(binding.match.channel) === provider)
    .filter(({ binding }) => {
      const account = norm(binding.match.accountId);
      return account === '' || account === '*' || account.toLowerCase() === ACCOUNT;
    });
  const { peer, parent } = peersOf({ ...input, provider });
  const scoped = { ...input, provider };
  const pick = (tier: BindingTier, test: (b: BindingEntry) => boolean): BindingDecision | undefined => {
    for (const { binding, index } of candidates) {
      if (!test(binding)) continue;
      // The schema refuses unknown agents; a config built without it falls through to the default.
      const agentId = configuredAgent(config, binding.agentId);
      if (agentId !== undefined) return { agentId, matchedBy: tier, index };
    }
    return undefined;
  };
  const { guildId, teamId } = spaces(scoped);
  const roles = input.roles ?? [];
  return (
    (peer && pick('binding.peer', (b) => tierOf(b) === 'binding.peer' && matches(b, peer, scoped))) ||
    (parent && pick('binding.peer.parent', (b) => tierOf(b) === 'binding.peer' && matches(b, parent, scoped))) ||
    (peer && pick('binding.peer.wildcard', (b) => tierOf(b) === 'binding.peer.wildcard' && matches(b, peer, scoped))) ||
    (guildId && roles.length > 0 ? pick('binding.guild+roles', (b) => tierOf(b) === 'binding.guild+roles' && matches(b, peer, scoped)) : undefined) ||
    (guildId ? pick('binding.guild', (b) => tierOf(b) === 'binding.guild' && matches(b, peer, scoped)) : undefined) ||
    (teamId ? pick('binding.team', (b) => tierOf(b) === 'binding.team' && matches(b, peer, scoped)) : undefined) ||
    pick('binding.account', (b) => tierOf(b) === 'binding.account' && matches(b, peer, scoped)) ||
    pick('binding.channel', (b) => tierOf(b) === 'binding.channel' && matches(b, peer, scoped)) || { agentId: defaultAgentId(config), matchedBy: 'default' }
  );
}

/** One line for `/status` and `warden tools`: `ops (bindings[2], binding.peer)` or `main (default agent)`. */
export function describeBinding(decision: BindingDecision): string {
  return decision.index === undefined ? `${decision.agentId} (no binding matched: the default agent)` : `${decision.agentId} (bindings[${decision.index}], ${decision.matchedBy})`;
}
