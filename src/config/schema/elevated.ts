import { z } from 'zod';

/**
 * `tools.elevated`: named senders may have a sandboxed agent run exec on the gateway host
 * instead, each command through an approval card. Off for everyone not listed; an agent's
 * block can only narrow the global one.
 */
export const elevatedConfig = z.strictObject({
  /** Default true, but nobody is elevated without an allowFrom entry. */
  enabled: z.boolean().optional(),
  /**
   * Sender ids per chat platform (`discord`, `slack`, `web`; OpenClaw's `webchat` means `web`).
   * Entries for platforms Warden has no adapter for never match anyone.
   */
  allowFrom: z.record(z.string().min(1), z.array(z.union([z.string().min(1), z.number()]))).optional(),
});
export type ElevatedConfig = z.infer<typeof elevatedConfig>;
