import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Message } from '../models/types.js';
import { createHarness, type Harness } from './testing.js';
import { Transcripts } from '../store/index.js';
import { NOTICE_PREFIX, summaryMessage } from './transcript.js';

let h: Harness;
beforeEach(() => {
  h = createHarness();
});
afterEach(() => h.cleanup());

const KEY = 'agent:main:slack:channel:c1';
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

describe('DbTranscriptStore', () => {
  it('round-trips user, assistant (with tool calls) and tool-result messages', () => {
    const messages: Message[] = [
      user('hi'),
      { role: 'assistant', content: [{ type: 'text', text: 'checking' }, { type: 'toolCall', id: 'c1', name: 'read', args: { path: 'a' } }] },
      { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: 'A' }], isError: true },
    ];
    const stored = h.transcripts.append(KEY, messages.map((message) => ({ kind: 'message', message })));
    expect(stored.map((e) => e.seq)).toEqual([...stored.map((e) => e.seq)].sort((a, b) => a - b));
    expect(h.transcripts.load(KEY).map((e) => e.message)).toEqual(messages);
  });

  it('loads the latest summary first and only the entries it does not cover; history keeps everything', () => {
    const [a, b, c] = h.transcripts.append(KEY, ['one', 'two', 'three'].map((t) => ({ kind: 'message' as const, message: user(t) })));
    h.transcripts.append(KEY, [{ kind: 'summary', message: summaryMessage('one and two happened'), coversThroughSeq: b!.seq }]);
    h.transcripts.append(KEY, [{ kind: 'message', message: user('four') }]);
    const loaded = h.transcripts.load(KEY);
    expect(loaded.map((e) => e.kind)).toEqual(['summary', 'message', 'message']);
    expect(loaded[0]!.message).toEqual(summaryMessage('one and two happened'));
    expect(loaded.slice(1).map((e) => (e.message.content[0] as { text: string }).text)).toEqual(['three', 'four']);
    expect(loaded[1]!.seq).toBe(c!.seq);

    const page = h.transcripts.history(KEY, { limit: 2 });
    expect(page.map((e) => e.kind)).toEqual(['summary', 'message']);
    const older = h.transcripts.history(KEY, { limit: 10, beforeSeq: page[0]!.seq });
    expect(older.map((e) => e.seq)).toEqual([a!.seq, b!.seq, c!.seq]);
  });

  it('reads a notice Warden wrote (an interrupted approval) as a notice in place, never as a summary', () => {
    h.transcripts.append(KEY, [{ kind: 'message', message: user('one') }]);
    h.transcripts.append(KEY, [{ kind: 'summary', message: summaryMessage('one happened'), coversThroughSeq: 0 }]);
    const rows = new Transcripts(h.store.db);
    rows.append({ sessionKey: KEY, role: 'system', tool: 'exec', content: 'Approval ab12 for exec was interrupted.' });
    h.transcripts.append(KEY, [{ kind: 'message', message: user('two') }]);
    const loaded = h.transcripts.load(KEY);
    expect(loaded.map((e) => e.kind)).toEqual(['summary', 'message', 'message', 'message']);
    expect(loaded[0]!.message).toEqual(summaryMessage('one happened'));
    expect(loaded.slice(1).map((e) => (e.message.content[0] as { text: string }).text)).toEqual(['one', `${NOTICE_PREFIX} Approval ab12 for exec was interrupted.`, 'two']);
    expect(h.transcripts.history(KEY, { limit: 10 }).map((e) => e.kind)).toEqual(['message', 'summary', 'message', 'message']);
  });

  it('lists sessions with their message counts, most recent first', () => {
    h.transcripts.append('agent:main:slack:channel:old', [{ kind: 'message', message: user('x') }]);
    h.transcripts.append(KEY, [{ kind: 'message', message: user('x') }, { kind: 'message', message: user('y') }]);
    const sessions = h.transcripts.sessions();
    expect(sessions.map((s) => [s.sessionKey, s.entries])).toEqual(
      expect.arrayContaining([
        ['agent:main:slack:channel:old', 1],
        [KEY, 2],
      ]),
    );
  });
});

describe('results persisted by the call path as well as by the loop', () => {
  it('load keeps only the last result per call within each run, in the loop’s order', () => {
    const call = (id: string, text: string): Message => ({ role: 'toolResult', toolCallId: id, toolName: 'read', content: [{ type: 'text', text }], isError: false });
    h.transcripts.append(KEY, [
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
    const texts = h.transcripts.load(KEY).map((e) => (e.message.content[0] && 'text' in e.message.content[0] ? e.message.content[0].text : 'call'));
    expect(texts).toEqual(['go', 'call', 'wrapped 1', 'wrapped 2', 'call', 'round 2']);
  });
});
