/** Chat providers Warden speaks to; the message-provider filter also knows voice providers. */
export type ChatProvider = 'discord' | 'slack' | 'web';
export type ChatType = 'dm' | 'channel' | 'thread';

/**
 * Everything the policy needs to know about one turn. Pure data: no config, no I/O. Built by
 * one builder (`turn/turn-context.ts`) for every path — an inbound message, a cron run, a
 * subagent spawn, a `sessions_send`, CLI context flags — so the derived fields (owner status,
 * model support, sandboxed) mean the same everywhere.
 */
export interface TurnContext {
  agentId: string;
  /** Inbound message provider (`discord`, `slack`, `web`; voice providers drop tts). */
  provider: string;
  chat: ChatType;
  /** Discord guild id or Slack team id. */
  guildId?: string | undefined;
  /** The guild's display name; a guild scope key may be its slug (`My Team` → `my-team`). */
  guildName?: string | undefined;
  /** Channel id; for a thread, the thread's parent channel. */
  channelId?: string | undefined;
  /** Channel name without `#`; for a thread, the parent's name. */
  channelName?: string | undefined;
  /** Thread id when chat is `thread` (its policy is the parent channel's). */
  threadId?: string | undefined;
  senderId?: string | undefined;
  senderName?: string | undefined;
  senderUsername?: string | undefined;
  /** Discord role ids the sender holds here (`toolsBySender["role:<id>"]`, access groups). */
  senderRoleIds?: string[] | undefined;
  /** Slack user group ids of the sender (`toolsBySender["usergroup:<id>"]`, access groups). */
  senderUsergroupIds?: string[] | undefined;
  /** Derived from `owners` by whoever builds the context; the policy never guesses it. */
  senderIsOwner: boolean;
  /** `provider/model` of the model answering this turn; undefined = no model configured. */
  model?: string | undefined;
  /** Whether the model supports tool calls at all (false → no tools, guard reason 3). */
  modelSupportsTools?: boolean | undefined;
  /** 0 for a main session; n for an n-th level subagent. */
  spawnDepth: number;
  /** A ceiling from the turn that started this one (a subagent's parent, a `sessions_send` sender): its final surface and its denies. */
  inherited?: InheritedPolicy | undefined;
  /** Whether exec runs sandboxed in this session (enables the sandbox step). */
  sandboxed?: boolean | undefined;
  /** `before_prompt_build` `toolsAllow` lists; each is an independent restriction. */
  toolsAllow?: string[][] | undefined;
  /** Tools disabled for this run (the guard's first reason). */
  disableTools?: boolean | undefined;
}

export interface InheritedPolicy {
  /** The parent's final visible tool ids; undefined when the parent had no restrictive allowlist. */
  allow?: string[] | undefined;
  deny: string[];
}
