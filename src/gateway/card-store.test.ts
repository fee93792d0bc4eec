import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../store/store.js';
import { storeCardStore } from './card-store.js';

describe('storeCardStore', () => {
  it('keeps card copies per approval and platform across reopening', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-cards-'));
    const first = openStore({ dataDir: dir });
    if (!first.ok) throw new Error(first.error.message);
    const discord = storeCardStore(first.store.db, 'discord');
    discord.add('a1', { channelId: 'c1', messageId: 'm1' });
    discord.add('a1', { channelId: 'dm', messageId: 'm2' });
    discord.add('a1', { channelId: 'c1', messageId: 'm1' });
    storeCardStore(first.store.db, 'slack').add('a1', { channelId: 'C1', messageId: '17.1' });
    first.store.close();

    const again = openStore({ dataDir: dir });
    if (!again.ok) throw new Error(again.error.message);
    expect(storeCardStore(again.store.db, 'discord').get('a1')).toEqual([
      { channelId: 'c1', messageId: 'm1' },
      { channelId: 'dm', messageId: 'm2' },
    ]);
    expect(storeCardStore(again.store.db, 'slack').get('a1')).toEqual([{ channelId: 'C1', messageId: '17.1' }]);
    expect(storeCardStore(again.store.db, 'discord').get('nope')).toEqual([]);
    again.store.close();
  });
});
