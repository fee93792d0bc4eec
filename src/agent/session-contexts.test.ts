import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/index.js';
import { SessionContextStore } from './session-contexts.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open() {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-session-contexts-'));
  dirs.push(dir);
  const opened = openStore({ dataDir: dir });
  if (!opened.ok) throw new Error(opened.error.message);
  return opened.store;
}

const KEY = 'agent:main:discord:channel:502';
const dev = { provider: 'discord', chat: 'channel' as const, guildId: '111', channelId: '502', channelName: 'dev' };

describe('SessionContextStore', () => {
  it('knows only sessions a conversation created, across a reopen', () => {
    const store = open();
    const contexts = new SessionContextStore(store.db);
    expect(contexts.get(KEY)).toBeUndefined();
    contexts.record(KEY, 'main', dev, 'bob', 1_000);
    const file = store.file;
    store.close();
    const reopened = openStore({ dataDir: path.dirname(file) });
    if (!reopened.ok) throw new Error(reopened.error.message);
    expect(new SessionContextStore(reopened.store.db).get(KEY)).toEqual({ sessionKey: KEY, agentId: 'main', conversation: dev, createdBy: 'bob', createdAt: 1_000, updatedAt: 1_000 });
    reopened.store.close();
  });

  it('follows a renamed channel but keeps who created the session; an unchanged context is not rewritten', () => {
    const store = open();
    const contexts = new SessionContextStore(store.db);
    contexts.record(KEY, 'main', dev, 'bob', 1_000);
    contexts.record(KEY, 'main', dev, 'alice', 2_000);
    expect(contexts.get(KEY)).toMatchObject({ createdBy: 'bob', updatedAt: 1_000 });
    contexts.record(KEY, 'main', { ...dev, channelName: 'engineering' }, 'alice', 3_000);
    expect(contexts.get(KEY)).toMatchObject({ conversation: { channelName: 'engineering' }, createdBy: 'bob', createdAt: 1_000, updatedAt: 3_000 });
    store.close();
  });
});
