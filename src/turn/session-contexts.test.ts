import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openWardenStore } from '../app/migrations.js';
import type { Store } from '../store/index.js';
import { SessionContextStore } from './session-contexts.js';

const open: Store[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function openAt(where: { dataDir: string; url: string | undefined }): Promise<Store> {
  const opened = await openWardenStore({ dataDir: where.dataDir, url: where.url });
  if (!opened.ok) throw new Error(opened.error.message);
  open.push(opened.store);
  return opened.store;
}

const KEY = 'agent:main:discord:channel:502';
const dev = { provider: 'discord', chat: 'channel' as const, guildId: '111', channelId: '502', channelName: 'dev' };

describe.each(ENGINES)('SessionContextStore on %s', (engine) => {
  it('knows only sessions a conversation created, across a reopen', async () => {
    const where = await freshStoreTarget(engine);
    const store = await openAt(where);
    const contexts = new SessionContextStore(store.db);
    expect(await contexts.get(KEY)).toBeUndefined();
    await contexts.record(KEY, 'main', dev, 'bob', 1_000);
    await store.close();
    const reopened = await openAt(where);
    expect(await new SessionContextStore(reopened.db).get(KEY)).toEqual({ sessionKey: KEY, agentId: 'main', conversation: dev, createdBy: 'bob', createdAt: 1_000, updatedAt: 1_000 });
  });

  it('follows a renamed channel but keeps who created the session; an unchanged context is not rewritten', async () => {
    const store = await openAt(await freshStoreTarget(engine));
    const contexts = new SessionContextStore(store.db);
    await contexts.record(KEY, 'main', dev, 'bob', 1_000);
    await contexts.record(KEY, 'main', dev, 'alice', 2_000);
    expect(await contexts.get(KEY)).toMatchObject({ createdBy: 'bob', updatedAt: 1_000 });
    await contexts.record(KEY, 'main', { ...dev, channelName: 'engineering' }, 'alice', 3_000);
    expect(await contexts.get(KEY)).toMatchObject({ conversation: { channelName: 'engineering' }, createdBy: 'bob', createdAt: 1_000, updatedAt: 3_000 });
  });
});
