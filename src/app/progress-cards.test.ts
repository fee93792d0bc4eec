import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StreamSurface } from '../gateway/reply-stream.js';
import type { ChatAdapter } from '../gateway/types.js';
import type { Store } from '../store/store.js';
import { nextView, renderCard, type CardView } from '../tools/core/progress-card/progress-card.js';
import { channelTurn } from './agent-testing.js';
import { openWardenStore } from './migrations.js';
import { ProgressCards } from './progress-cards.js';

describe('renderCard and nextView', () => {
  it.each([
    [{ title: 'Deploy', steps: [] }, '**Deploy**'],
    [{ title: 'Deploy', steps: [{ text: 'build', status: 'done' }, { text: 'ship', status: 'in_progress' }, { text: 'tell', status: 'pending' }] }, '**Deploy**\n✅ build\n⏳ ship\n▫️ tell'],
    [{ title: 'Deploy', steps: [{ text: 'a\nb', status: 'failed' }], note: 'retrying', final: 'failed' }, '**Deploy**\n❌ a b\n_retrying_\n❌ Failed'],
    [{ title: 'x'.repeat(300), steps: [] }, `**${'x'.repeat(199)}…**`],
  ] as Array<[CardView, string]>)('%j → %j', (view, text) => {
    expect(renderCard(view)).toBe(text);
  });

  it.each([
    ['first call without a title', undefined, {}, { title: 'Progress', steps: [], note: undefined, final: undefined }],
    ['keeps the title and steps it is not given', { title: 'T', steps: [{ text: 's', status: 'done' }] }, { note: 'n' }, { title: 'T', steps: [{ text: 's', status: 'done' }], note: 'n', final: undefined }],
    ['a closed card starts anew', { title: 'T', steps: [{ text: 's', status: 'done' }], final: 'done' }, {}, { title: 'Progress', steps: [], note: undefined, final: undefined }],
  ] as const)('%s', (_label, previous, update, expected) => {
    expect(nextView(previous as CardView | undefined, update as never)).toEqual(expected);
  });
});

/** A platform that records what a stream writes (message ids are counters). */
function recordingAdapter() {
  const writes: Array<{ op: 'post' | 'edit'; id: string; text: string; at: number }> = [];
  let next = 1;
  const surface: StreamSurface = {
    limit: 2000,
    minIntervalMs: 50,
    async post(text) {
      const id = `m${next++}`;
      writes.push({ op: 'post', id, text, at: Date.now() });
      return id;
    },
    async edit(id, text) {
      writes.push({ op: 'edit', id, text, at: Date.now() });
    },
  };
  const adapter = { provider: 'discord', streamTo: () => surface } as unknown as ChatAdapter;
  return { writes, adapter };
}

describe('ProgressCards', () => {
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
  });

  it('after a restart the next call edits the same message; closing forgets it', async () => {
    const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-cards-')) });
    if (!opened.ok) throw new Error(opened.error.message);
    store = opened.store;
    const platform = recordingAdapter();
    const turn = channelTurn();
    const key = 'agent:main:discord:channel:c1';
    const before = new ProgressCards({ adapter: () => platform.adapter, db: store.db });
    expect(await before.show({ sessionKey: key, turn, update: { title: 'Backup', steps: [{ text: 'dump', status: 'in_progress' }] } })).toEqual({ ok: true, state: 'open', messageId: 'm1' });
    // A new process: nothing in memory, the stored ref resumes the card.
    const after = new ProgressCards({ adapter: () => platform.adapter, db: store.db });
    expect(await after.show({ sessionKey: key, turn, update: { steps: [{ text: 'dump', status: 'done' }] } })).toMatchObject({ ok: true, messageId: 'm1' });
    expect(await after.show({ sessionKey: key, turn, update: { final: 'done' } })).toMatchObject({ ok: true, state: 'closed', messageId: 'm1' });
    expect(platform.writes.filter((w) => w.op === 'post')).toHaveLength(1);
    expect(platform.writes.at(-1)).toMatchObject({ op: 'edit', id: 'm1', text: '**Backup**\n✅ dump\n✅ Done' });
    expect(await store.db.value('SELECT COUNT(*) FROM progress_cards')).toBe(0);
    // The next card is a new message.
    expect(await after.show({ sessionKey: key, turn, update: { title: 'Next' } })).toMatchObject({ messageId: 'm2' });
  });

  it('refuses where there is no conversation or no adapter that edits', async () => {
    const cards = new ProgressCards({ adapter: () => undefined });
    expect(await cards.show({ sessionKey: 'k', turn: channelTurn(), update: {} })).toMatchObject({ ok: false, error: expect.stringContaining('can edit a message in place') });
    expect(await cards.show({ sessionKey: 'k', turn: channelTurn({ channelId: undefined }), update: {} })).toMatchObject({ ok: false, error: expect.stringContaining('no conversation') });
  });

  it('many quick updates coalesce into writes no closer than the surface’s interval', async () => {
    const platform = recordingAdapter();
    const cards = new ProgressCards({ adapter: () => platform.adapter });
    for (let i = 0; i < 20; i++) await cards.show({ sessionKey: 'k', turn: channelTurn(), update: { title: 'Loop', note: `step ${i}` } });
    await cards.show({ sessionKey: 'k', turn: channelTurn(), update: { final: 'done' } });
    expect(platform.writes.length).toBeLessThan(10);
    for (let i = 1; i < platform.writes.length; i++) expect(platform.writes[i]!.at - platform.writes[i - 1]!.at).toBeGreaterThanOrEqual(45);
    expect(platform.writes.at(-1)!.text).toContain('✅ Done');
  });
});
