import { describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openWardenStore } from '../app/migrations.js';
import { storeCardStore } from './card-store.js';

describe.each(ENGINES)('storeCardStore on %s', (engine) => {
  it('keeps card copies per approval and platform across reopening', async () => {
    const where = await freshStoreTarget(engine);
    const first = await openWardenStore({ dataDir: where.dataDir, url: where.url });
    if (!first.ok) throw new Error(first.error.message);
    const discord = storeCardStore(first.store.db, 'discord');
    await discord.add('a1', { channelId: 'c1', messageId: 'm1' });
    await discord.add('a1', { channelId: 'dm', messageId: 'm2' });
    await discord.add('a1', { channelId: 'c1', messageId: 'm1' });
    await storeCardStore(first.store.db, 'slack').add('a1', { channelId: 'C1', messageId: '17.1' });
    await first.store.close();

    const again = await openWardenStore({ dataDir: where.dataDir, url: where.url });
    if (!again.ok) throw new Error(again.error.message);
    try {
      expect(await storeCardStore(again.store.db, 'discord').get('a1')).toEqual([
        { channelId: 'c1', messageId: 'm1' },
        { channelId: 'dm', messageId: 'm2' },
      ]);
      expect(await storeCardStore(again.store.db, 'slack').get('a1')).toEqual([{ channelId: 'C1', messageId: '17.1' }]);
      expect(await storeCardStore(again.store.db, 'discord').get('nope')).toEqual([]);
    } finally {
      await again.store.close();
    }
  });
});
