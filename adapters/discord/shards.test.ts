import { describe, expect, it } from 'vitest';
import { describeAdapter } from '../../src/ops/adapter-text.js';
import { shardClientOptions } from './shards.js';

describe('Discord shard settings', () => {
  it.each([
    ['absent: one connection, as without sharding', undefined, {}],
    ['auto: the count /gateway/bot recommends', 'auto', { shards: 'auto' }],
    ['a number: that many shards, ids 0..N-1', 3, { shardCount: 3 }],
    ['a list of ids with shardCount: those shards of that many', [1, 3], { shards: [1, 3], shardCount: 4 }],
  ] as const)('%s', (_what, setting, options) => {
    expect(shardClientOptions(setting, Array.isArray(setting) ? 4 : undefined)).toEqual(options);
  });
});

describe("/status's Chat line", () => {
  it.each([
    ['a platform without shards', undefined, 'slack'],
    ['no shards reported', [], 'slack'],
    ['one shard', [{ id: 0, status: 'ready', pingMs: 12, reconnects: 0 }], 'slack (1 shard: #0 ready)'],
    [
      'each shard with its state and reconnects',
      [
        { id: 0, status: 'ready', pingMs: 12, reconnects: 0 },
        { id: 1, status: 'resuming', pingMs: undefined, reconnects: 2 },
      ],
      'slack (2 shards: #0 ready; #1 resuming, 2 reconnects)',
    ],
  ])('%s', (_what, shards, line) => {
    expect(describeAdapter('slack', shards)).toBe(line);
  });
});
