import { describe, expect, it } from 'vitest';
import { chunkText } from './chunk-text.js';
import { ReplyStream, toolProgressLine, type StreamSurface } from './reply-stream.js';

/** A surface that records every write and a clock the test moves. */
function harness(limit = 2000, minIntervalMs = 1000, opts: { failAt?: number; noRemove?: boolean } = {}) {
  let now = 0;
  const timers: Array<{ at: number; fn: () => void; cancelled: boolean }> = [];
  const writes: string[] = [];
  const messages = new Map<string, string>();
  let n = 0;
  const maybeFail = () => {
    if (opts.failAt !== undefined && writes.length === opts.failAt) throw new Error('platform said no');
  };
  const surface: StreamSurface = {
    limit,
    minIntervalMs,
    async post(text) {
      maybeFail();
      const id = `m${++n}`;
      writes.push(`post ${id} ${text}`);
      messages.set(id, text);
      return id;
    },
    async edit(id, text) {
      maybeFail();
      writes.push(`edit ${id} ${text}`);
      messages.set(id, text);
    },
    ...(opts.noRemove
      ? {}
      : {
          async remove(id: string) {
            writes.push(`remove ${id}`);
            messages.delete(id);
          },
        }),
  };
  const stream = new ReplyStream(surface, {
    now: () => now,
    setTimer: (fn, ms) => {
      const t = { at: now + ms, fn, cancelled: false };
      timers.push(t);
      return { cancel: () => (t.cancelled = true) };
    },
  });
  const settle = () => new Promise((r) => setTimeout(r, 0));
  const advance = async (ms: number) => {
    now += ms;
    for (const t of timers.splice(0)) {
      if (t.cancelled) continue;
      if (t.at <= now) t.fn();
      else timers.push(t);
    }
    await settle();
  };
  return { stream, writes, messages, advance, settle, visible: () => [...messages.values()] };
}

describe('ReplyStream', () => {
  it('posts the first delta at once, then edits no faster than the interval, coalescing', async () => {
    const h = harness();
    h.stream.append('Hel');
    await h.settle();
    expect(h.writes).toEqual(['post m1 Hel']);
    for (const d of ['lo', ', ', 'wor', 'ld']) h.stream.append(d);
    await h.advance(500);
    expect(h.writes).toHaveLength(1);
    await h.advance(500);
    expect(h.writes).toEqual(['post m1 Hel', 'edit m1 Hello, world']);
    expect(await h.stream.finish('Hello, world!')).toBe(true);
    expect(h.visible()).toEqual(['Hello, world!']);
    expect(h.stream.stats).toMatchObject({ posts: 1, edits: 2, removes: 0, failed: false, firstVisibleAt: 0 });
  });

  it('the final edit is exact even when the streamed text differed', async () => {
    const h = harness();
    h.stream.append('thinking about it… ');
    await h.settle();
    expect(await h.stream.finish('The answer is 42.')).toBe(true);
    expect(h.visible()).toEqual(['The answer is 42.']);
  });

  it('a tool progress line shows under the text and the answer replaces it', async () => {
    const h = harness(2000, 0);
    h.stream.append('Let me check.');
    await h.settle();
    h.stream.progress(toolProgressLine('exec'));
    await h.settle();
    expect(h.visible()).toEqual(['Let me check.\n\n_running `exec` …_']);
    h.stream.append(' It is up.');
    await h.settle();
    expect(h.visible()).toEqual(['Let me check. It is up.']);
    await h.stream.finish('Let me check. It is up.');
    expect(h.visible()).toEqual(['Let me check. It is up.']);
  });

  it("a new round's text replaces the last round's when it starts", async () => {
    const h = harness(2000, 0);
    h.stream.append('Let me check.');
    await h.settle();
    h.stream.progress(toolProgressLine('exec'));
    h.stream.newRound();
    await h.settle();
    expect(h.visible()).toEqual(['Let me check.\n\n_running `exec` …_']);
    h.stream.append('It is up.');
    await h.settle();
    expect(h.visible()).toEqual(['It is up.']);
  });

  it('a progress line alone is the first visible message', async () => {
    const h = harness();
    h.stream.progress(toolProgressLine('web_fetch'));
    await h.settle();
    expect(h.writes).toEqual(['post m1 _running `web_fetch` …_']);
    await h.stream.finish('Fetched.');
    expect(h.visible()).toEqual(['Fetched.']);
  });

  it('continues in new messages at the length limit; the final split is a plain reply\'s', async () => {
    const h = harness(100, 0);
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i} ${'x'.repeat(20)}`);
    for (const line of lines) {
      h.stream.append(`${line}\n`);
      await h.settle();
    }
    const final = lines.join('\n');
    expect(await h.stream.finish(final)).toBe(true);
    expect(h.visible()).toEqual(chunkText(final, 100));
    expect(h.visible().length).toBeGreaterThan(2);
    expect(h.visible().every((m) => m.length <= 100)).toBe(true);
  });

  it('messages the final text no longer needs are removed (or emptied without remove)', async () => {
    for (const noRemove of [false, true]) {
      const h = harness(40, 0, { noRemove });
      h.stream.append('a'.repeat(35) + '\n' + 'b'.repeat(30));
      await h.settle();
      expect(h.visible()).toHaveLength(2);
      await h.stream.finish('short');
      expect(h.visible()).toEqual(noRemove ? ['short', '…'] : ['short']);
    }
  });

  it('nothing streamed: finish says so and the caller sends the reply', async () => {
    const h = harness();
    expect(await h.stream.finish('hi')).toBe(false);
    expect(h.writes).toEqual([]);
  });

  it('a failed write stops streaming; finish tries once more and reports the outcome', async () => {
    const h = harness(2000, 0, { failAt: 1 });
    h.stream.append('one');
    await h.settle();
    h.stream.append(' two');
    await h.settle();
    expect(h.stream.stats.failed).toBe(true);
    expect(await h.stream.finish('one two three')).toBe(false);
    expect(h.visible()).toEqual(['one']);
  });

  it('an empty final reply removes what was streamed', async () => {
    const h = harness();
    h.stream.progress(toolProgressLine('exec'));
    await h.settle();
    expect(await h.stream.finish('')).toBe(true);
    expect(h.visible()).toEqual([]);
  });
});
