/** One gateway connection of a sharded platform, as `/status` shows it. */
export interface ShardState {
  id: number;
  /** discord.js's status, lower-cased: `ready`, `resuming`, `connecting`, `disconnected`, … */
  status: string;
  /** Last heartbeat round trip; undefined before the first. */
  pingMs: number | undefined;
  /** Times it lost its connection since the adapter started. */
  reconnects: number;
}

/** `discord (2 shards: #0 ready; #1 resuming, 1 reconnect)`: a platform and its gateway connections, for `/status` and `/readyz`. */
export function describeAdapter(provider: string, shards: readonly ShardState[] | undefined): string {
  if (!shards || shards.length === 0) return provider;
  const each = shards.map((s) => `#${s.id} ${s.status}${s.reconnects > 0 ? `, ${s.reconnects} reconnect${s.reconnects === 1 ? '' : 's'}` : ''}`);
  return `${provider} (${shards.length} shard${shards.length === 1 ? '' : 's'}: ${each.join('; ')})`;
}
