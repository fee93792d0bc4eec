import { describe, expect, it } from 'vitest';
import { SessionQueues } from './queue.js';

/** A runner whose items finish only when the test says so. */
function controlledRunner() {
  const started: string[] = [];
  const finished: string[] = [];
  const gates = new Map<string, () => void>();
  const signals = new Map<string, AbortSignal>();
  const run = async (_key: string, item: string, signal: AbortSignal) => {
    started.push(item);
    signals.set(item, signal);
    await new Promise<void>((resolve) => {
      gates.set(item, resolve);
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    finished.push(item);
  };
  const release = async (item: string) => {
    gates.get(item)?.();
    await new Promise((r) => setImmediate(r));
  };
  return { run, started, finished, release, signals };
}

describe('SessionQueues', () => {
  it('runs one item at a time per session, in arrival order', async () => {
    const r = controlledRunner();
    const q = new SessionQueues(r.run, { maxPending: 10 });
    expect(q.enqueue('s', 'a')).toEqual({ ok: true, position: 0 });
    expect(q.enqueue('s', 'b')).toEqual({ ok: true, position: 1 });
    expect(q.enqueue('s', 'c')).toEqual({ ok: true, position: 2 });
    expect(r.started).toEqual(['a']);
    await r.release('a');
    expect(r.started).toEqual(['a', 'b']);
    await r.release('b');
    await r.release('c');
    expect(r.finished).toEqual(['a', 'b', 'c']);
    await q.whenIdle();
    expect(q.stats()).toEqual({ sessions: 0, running: 0, pending: 0 });
  });

  it('runs different sessions concurrently', () => {
    const r = controlledRunner();
    const q = new SessionQueues(r.run, { maxPending: 10 });
    q.enqueue('s1', 'a');
    q.enqueue('s2', 'b');
    expect(r.started).toEqual(['a', 'b']);
    expect(q.stats()).toEqual({ sessions: 2, running: 2, pending: 0 });
  });

  it('refuses an item when the session queue is full and keeps the others', async () => {
    const r = controlledRunner();
    const q = new SessionQueues(r.run, { maxPending: 2 });
    q.enqueue('s', 'a');
    q.enqueue('s', 'b');
    q.enqueue('s', 'c');
    expect(q.enqueue('s', 'd')).toEqual({ ok: false, reason: 'full' });
    expect(q.enqueue('other', 'x')).toEqual({ ok: true, position: 0 });
    for (const item of ['a', 'b', 'c', 'x']) await r.release(item);
    expect(r.finished.sort()).toEqual(['a', 'b', 'c', 'x']);
  });

  it('abort stops the running item only; the next one starts', async () => {
    const r = controlledRunner();
    const q = new SessionQueues(r.run, { maxPending: 5 });
    q.enqueue('s', 'a');
    q.enqueue('s', 'b');
    expect(q.abort('s')).toBe(true);
    expect(r.signals.get('a')?.aborted).toBe(true);
    await new Promise((res) => setImmediate(res));
    expect(r.started).toEqual(['a', 'b']);
    expect(q.abort('nobody')).toBe(false);
  });

  it('a failing item does not stall its session', async () => {
    const order: string[] = [];
    const q = new SessionQueues<string>(async (_k, item) => {
      order.push(item);
      if (item === 'boom') throw new Error('bug');
    });
    q.enqueue('s', 'boom');
    q.enqueue('s', 'after');
    await q.whenIdle();
    expect(order).toEqual(['boom', 'after']);
  });

  it('close lets queued items finish; then refuses new ones', async () => {
    const r = controlledRunner();
    const q = new SessionQueues(r.run, { maxPending: 5 });
    q.enqueue('s', 'a');
    q.enqueue('s', 'b');
    q.close();
    expect(q.enqueue('s', 'late')).toEqual({ ok: false, reason: 'closed' });
    const idle = q.whenIdle();
    await r.release('a');
    await r.release('b');
    await idle;
    expect(r.finished).toEqual(['a', 'b']);
  });

  it('abortAll aborts running items and hands waiting ones back', async () => {
    const r = controlledRunner();
    const q = new SessionQueues(r.run, { maxPending: 5 });
    q.enqueue('s', 'a');
    q.enqueue('s', 'b');
    q.enqueue('t', 'c');
    q.close();
    expect(q.abortAll()).toEqual(['b']);
    await q.whenIdle();
    expect(r.started.sort()).toEqual(['a', 'c']);
    expect(r.signals.get('a')?.aborted && r.signals.get('c')?.aborted).toBe(true);
  });
});
