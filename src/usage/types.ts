import type { Usage } from '../models/types.js';

/** Who and what one model call was for: the facts usage is recorded and budgets are matched by. */
export interface UsageAttribution {
  agentId: string;
  /** The conversation (session key); absent for calls outside one. */
  sessionKey?: string | undefined;
  /** The platform the turn came from (`discord`, `slack`, `web`, …). */
  platform?: string | undefined;
  senderId?: string | undefined;
  senderName?: string | undefined;
  channelId?: string | undefined;
  threadId?: string | undefined;
  /** The Discord guild or Slack team. */
  guildId?: string | undefined;
  /** What the call was for: a turn's reply, compaction, the image tool, … */
  purpose: string;
}

/** One recorded call. `costNano` is undefined when the price is unknown (never 0 for unknown). */
export interface UsageRecord {
  at: number;
  provider: string;
  model: string;
  attribution: UsageAttribution;
  usage: Usage;
  costNano: number | undefined;
  priceSource: string | undefined;
}

export type CounterUnit = 'usd' | 'tokens';
