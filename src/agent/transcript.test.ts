import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import type { Message } from '../models/types.js';
import { openWardenStore } from '../app/migrations.js';
import type { StoreEngine } from '../store/db.js';
import { Transcripts, type Store } from '../store/index.js';
import { DbTranscriptStore, NOTICE_PREFIX, summaryMessage } from './transcript.js';

const open: Store[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** A transcript store over a new store on `engine`. */
async function storeOn(engine: StoreEngine): Promise<{ store: Store; transcripts: DbTranscriptStore }> {
  const where = await freshStoreTarget(engine);
  const opened = await openWardenStore({ dataDir: where.dataDir, url: where.url });
  if (!opened.ok) throw new Error(opened.error.message);
  open.push(opened.store);
  return { store: opened.store, transcripts: new DbTranscriptStore(opened.store.db) };
}

const KEY = 'agent:main:slack:channel:c1';
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

describe.each(ENGINES)('DbTranscriptStore on %s', (engine) => {
  it('round-trips user, assistant (with tool calls) and tool-result messages', async () => {
    const h = await storeOn(engine);
    const messages: Message[] = [
      user('hi'),
      { role: 'assistant', content: [{ type: 'text', text: 'checking' }, { type: 'toolCall', id: 'c1', name: 'read', args: { path: 'a' } }] },
      { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: 'A' }], isError: true },
    ];
    const stored = await h.transcripts.append(KEY, messages.map((message) => ({ kind: 'message', message })));
    expect(stored.map((e) => e.seq)).toEqual([...stored.map((e) => e.seq)].sort((a, b) => a - b));
    expect((await h.transcripts.load(KEY)).map((e) => e.message)).toEqual(messages);
  });

  it('loads the latest summary first and only the entries it does not cover; history keeps everything', async () => {
    const h = await storeOn(engine);
    const [a, b, c] = await h.transcripts.append(KEY, ['one', 'two', 'three'].map((t) => ({ kind: 'message' as const, message: user(t) })));
    await h.transcripts.append(KEY, [{ kind: 'summary', message: summaryMessage('one and two happened'), coversThroughSeq: b!.seq }]);
    await h.transcripts.append(KEY, [{ kind: 'message', message: user('four') }]);
    const loaded = await h.transcripts.load(KEY);
    expect(loaded.map((e) => e.kind)).toEqual(['summary', 'message', 'message']);
    expect(loaded[0]!.message).toEqual(summaryMessage('one and two happened'));
    expect(loaded.slice(1).map((e) => (e.message.content[0] as { text: string }).text)).toEqual(['three', 'four']);
    expect(loaded[1]!.seq).toBe(c!.seq);

    const page = await h.transcripts.history(KEY, { limit: 2 });
    expect(page.map((e) => e.kind)).toEqual(['summary', 'message']);
    const older = await h.transcripts.history(KEY, { limit: 10, beforeSeq: page[0]!.seq });
    expect(older.map((e) => e.seq)).toEqual([a!.seq, b!.seq, c!.seq]);
  });

  it('with two summaries, loads the latest and every entry after what it covers (those before its row too), never the older summary', async () => {
    const h = await storeOn(engine);
    const texts = (entries: Array<{ message: Message }>) => entries.map((e) => (e.message.content[0] as { text: string }).text);
    const [a, , c] = await h.transcripts.append(KEY, ['a', 'b', 'c'].map((t) => ({ kind: 'message' as const, message: user(t) })));
    await h.transcripts.append(KEY, [{ kind: 'summary', message: summaryMessage('a happened'), coversThroughSeq: a!.seq }]);
    const [, e] = await h.transcripts.append(KEY, ['d', 'e'].map((t) => ({ kind: 'message' as const, message: user(t) })));
    // Without entries after the latest summary's row, the entries it does not cover are all before
    // it; the older summary's row is among them and is left out.
    await h.transcripts.append(KEY, [{ kind: 'summary', message: summaryMessage('a to c happened'), coversThroughSeq: c!.seq }]);
    const onlyBefore = await h.transcripts.load(KEY);
    expect(onlyBefore[0]!.message).toEqual(summaryMessage('a to c happened'));
    expect(texts(onlyBefore.slice(1))).toEqual(['d', 'e']);
    await h.transcripts.append(KEY, [{ kind: 'message', message: user('f') }]);
    const loaded = await h.transcripts.load(KEY);
    expect(loaded.map((x) => x.kind)).toEqual(['summary', 'message', 'message', 'message']);
    expect(texts(loaded.slice(1))).toEqual(['d', 'e', 'f']);
    expect(loaded[2]!.seq).toBe(e!.seq);
  });

  it('reads a notice Warden wrote (an interrupted approval) as a notice in place, never as a summary', async () => {
    const h = await storeOn(engine);
    await h.transcripts.append(KEY, [{ kind: 'message', message: user('one') }]);
    await h.transcripts.append(KEY, [{ kind: 'summary', message: summaryMessage('one happened'), coversThroughSeq: 0 }]);
    const rows = new Transcripts(h.store.db);
    await rows.append({ sessionKey: KEY, role: 'system', tool: 'exec', content: 'Approval ab12 for exec was interrupted.' });
    await h.transcripts.append(KEY, [{ kind: 'message', message: user('two') }]);
    const loaded = await h.transcripts.load(KEY);
    expect(loaded.map((e) => e.kind)).toEqual(['summary', 'message', 'message', 'message']);
    expect(loaded[0]!.message).toEqual(summaryMessage('one happened'));
    expect(loaded.slice(1).map((e) => (e.message.content[0] as { text: string }).text)).toEqual(['one', `${NOTICE_PREFIX} Approval ab12 for exec was interrupted.`, 'two']);
    expect((await h.transcripts.history(KEY, { limit: 10 })).map((e) => e.kind)).toEqual(['message', 'summary', 'message', 'message']);
  });

  it('lists sessions with their message counts, most recent first', async () => {
    const h = await storeOn(engine);
    await h.transcripts.append('agent:main:slack:channel:old', [{ kind: 'message', message: user('x') }]);
    await h.transcripts.append(KEY, [{ kind: 'message', message: user('x') }, { kind: 'message', message: user('y') }]);
    const sessions = await h.transcripts.sessions();
    expect(sessions.map((s) => [s.sessionKey, s.entries])).toEqual(
      expect.arrayContaining([
        ['agent:main:slack:channel:old', 1],
        [KEY, 2],
      ]),
    );
  });
});

describe.each(ENGINES)('results persisted by the call path as well as by the loop on %s', (engine) => {
  it('load keeps only the last result per call within each run, in the loop’s order', async () => {
    const h = await storeOn(engine);
    const call = (id: string, text: string): Message => ({ role: 'toolResult', toolCallId: id, toolName: 'read', content: [{ type: 'text', text }], isError: false });
    await h.transcripts.append(KEY, [
      { kind: 'message', message: user('go') },
      { kind: 'message', message: { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'read', args: {} }, { type: 'toolCall', id: 'c2', name: 'read', args: {} }] } },
      // The call path's rows, in completion order …
      { kind: 'message', message: call('c2', 'raw 2') },
      { kind: 'message', message: call('c1', 'raw 1') },
      // … then the loop's, in call order.
      { kind: 'message', message: call('c1', 'wrapped 1') },
      { kind: 'message', message: call('c2', 'wrapped 2') },
      // A server without ids reuses one in the next round: that result is not a duplicate.
      { kind: 'message', message: { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'read', args: {} }] } },
      { kind: 'message', message: call('c1', 'round 2') },
    ]);
    const texts = (await h.transcripts.load(KEY)).map((e) => (e.message.content[0] && 'text' in e.message.content[0] ? e.message.content[0].text : 'call'));
    expect(texts).toEqual(['go', 'call', 'wrapped 1', 'wrapped 2', 'call', 'round 2']);
  });
});
