import { Events, Status, type Client, type ClientOptions } from 'discord.js';
import type { ShardState } from '../../src/gateway/types.js';
import { log } from '../../src/log/log.js';

/** `channels.discord.shards`: absent is one connection, as without sharding. */
export type ShardSetting = 'auto' | number | readonly number[] | undefined;

/**
 * The discord.js client options for a shard setting. discord.js runs every shard in this one
 * client (its own internal sharding): `auto` asks `GET /gateway/bot` for Discord's
 * recommended count, a number opens that many. One client means one event handler, one store
 * and one slash command registration for all of them. A list of ids opens those shards only,
 * out of `shardCount`: the bot's shards split over processes sharing one store.
 */
export function shardClientOptions(setting: ShardSetting, shardCount?: number): Pick<ClientOptions, 'shards' | 'shardCount'> {
  if (setting === 'auto') return { shards: 'auto' };
  if (setting === undefined) return {};
  // Some of the bot's shards, the others run by other processes on the same store.
  if (typeof setting !== 'number') return { shards: [...setting], shardCount: shardCount! };
  return { shardCount: setting };
}

/** `WaitingForGuilds` → `waiting for guilds`. */
const statusName = (status: Status): string => (Status[status] ?? `status ${status}`).replace(/[A-Z]/g, (c, i: number) => (i === 0 ? c.toLowerCase() : ` ${c.toLowerCase()}`));

/**
 * Follows the client's shards: logs each one that drops, reconnects, resumes or gives up, and
 * counts its reconnects, so `/status` and the logs say which shard (and so which guilds) went
 * away and whether it came back. discord.js reconnects and resumes a dropped shard by itself.
 */
export function watchShards(client: Client): { states(): ShardState[] } {
  const logger = log.child({ adapter: 'discord' });
  const reconnects = new Map<number, number>();
  client.on(Events.ShardReady, (shardId) => logger.info({ shardId }, 'discord shard ready'));
  client.on(Events.ShardReconnecting, (shardId) => {
    reconnects.set(shardId, (reconnects.get(shardId) ?? 0) + 1);
    logger.warn({ shardId, reconnects: reconnects.get(shardId) }, 'discord shard disconnected; reconnecting');
  });
  client.on(Events.ShardResume, (shardId, replayed) => logger.info({ shardId, replayed }, 'discord shard resumed'));
  client.on(Events.ShardDisconnect, (event, shardId) => logger.error({ shardId, code: event.code }, 'discord shard disconnected and will not reconnect'));
  client.on(Events.ShardError, (err, shardId) => logger.warn({ err, shardId }, 'discord shard connection error'));
  return {
    states: () =>
      [...client.ws.shards.values()]
        .map((shard) => ({ id: shard.id, status: statusName(shard.status), pingMs: shard.ping >= 0 ? shard.ping : undefined, reconnects: reconnects.get(shard.id) ?? 0 }))
        .sort((a, b) => a.id - b.id),
  };
}
