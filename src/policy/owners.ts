import type { WardenConfig } from '../config/schema/index.js';

/** The web chat's local user. */
export const WEB_LOCAL_USER = 'local';

/**
 * Whether `senderId` is an owner on `provider` (semantics §3: owners are platform user ids in
 * `owners`). No sender, or a provider without owners, is never an owner: owner-only tools fail
 * closed.
 */
export function isOwner(config: Pick<WardenConfig, 'owners'>, provider: string, senderId: string | undefined): boolean {
  if (!senderId) return false;
  const ids = (config.owners as Record<string, readonly string[] | undefined>)[provider.trim().toLowerCase()];
  if (!ids) return false;
  const wanted = senderId.trim().toLowerCase();
  return ids.some((id) => id.trim().toLowerCase() === wanted);
}
