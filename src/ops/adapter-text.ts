import type { ShardState } from '../gateway/types.js';

/** `discord (2 shards: #0 ready; #1 resuming, 1 reconnect)`: a platform and its gateway connections, for `/status` and `/readyz`. */
export function describeAdapter(provider: string, shards: readonly ShardState[] | undefined): string {
  if (!shards || shards.length === 0) return provider;
  const each = shards.map((s) => `#${s.id} ${s.status}${s.reconnects > 0 ? `, ${s.reconnects} reconnect${s.reconnects === 1 ? '' : 's'}` : ''}`);
  return `${provider} (${shards.length} shard${shards.length === 1 ? '' : 's'}: ${each.join('; ')})`;
}
