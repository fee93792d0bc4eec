import * as z from 'zod';
import { lazySchema } from './lazy.js';
import { notSupported } from '../openclaw/translate.js';

/** Platforms Warden has adapters for: their allowFrom entries must name people by id. */
const WARDEN_PLATFORMS = new Set(['discord', 'slack', 'web']);

/**
 * `tools.elevated`: named senders may have a sandboxed agent run exec on the gateway host
 * instead, each command through an approval card. Off for everyone not listed; an agent's
 * block can only narrow the global one.
 */
export const elevatedConfig = lazySchema(() => z
  .strictObject({
    /** Default true, but nobody is elevated without an allowFrom entry. */
    enabled: z.boolean().optional(),
    /**
     * Sender ids per chat platform (`discord`, `slack`, `web`; OpenClaw's `webchat` means `web`).
     * Entries for platforms Warden has no adapter for never match anyone.
     */
    allowFrom: z.record(z.string().min(1), z.array(z.union([z.string().min(1), z.number()]))).optional(),
  })
  .superRefine((value, ctx) => {
    for (const [platform, list] of Object.entries(value.allowFrom ?? {})) {
      if (!WARDEN_PLATFORMS.has(platform)) continue;
      list.forEach((raw, i) => {
        const entry = String(raw).trim();
        if (entry === '*' || /^(name|username|tag):/i.test(entry)) {
          ctx.addIssue({
            code: 'custom',
            path: ['allowFrom', platform, i],
            message: notSupported(`tools.elevated.allowFrom.${platform}: ${entry}`, 'in OpenClaw it may name senders by display name or everyone; Warden elevates senders by their platform id only, since anyone can pick a name'),
          });
        }
      });
    }
  }));
export type ElevatedConfig = z.infer<typeof elevatedConfig>;
