import { describe, expect, it } from 'vitest';
import { FrameContext } from './frame-context.js';

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

describe('FrameContext: the open transaction of the caller', () => {
  it('is the frame everywhere inside run, across awaits, timers and nested calls', async () => {
    const context = new FrameContext<string>();
    const seen: Array<string | undefined> = [];
    await context.run('a', async () => {
      seen.push(context.current());
      await tick();
      seen.push(context.current());
      await new Promise<void>((resolve) => setImmediate(() => (seen.push(context.current()), resolve())));
      await Promise.all([1, 2].map(async () => (await tick(), seen.push(context.current()))));
    });
    expect(seen).toEqual(['a', 'a', 'a', 'a', 'a']);
  });

  it('is undefined outside every run, before and after', async () => {
    const context = new FrameContext<string>();
    expect(context.current()).toBeUndefined();
    await context.run('a', async () => tick());
    expect(context.current()).toBeUndefined();
  });

  it('keeps overlapping runs apart, and each sees its own frame until it ends', async () => {
    const context = new FrameContext<string>();
    let releaseA!: () => void;
    const gateA = new Promise<void>((resolve) => (releaseA = resolve));
    const seen: Record<string, Array<string | undefined>> = { a: [], b: [] };
    const a = context.run('a', async () => {
      seen.a!.push(context.current());
      await gateA;
      seen.a!.push(context.current());
    });
    const b = context.run('b', async () => {
      seen.b!.push(context.current());
      await tick();
      seen.b!.push(context.current());
    });
    await b;
    // b ended while a is still open: a still sees its frame.
    releaseA();
    await a;
    expect(seen).toEqual({ a: ['a', 'a'], b: ['b', 'b'] });
    expect(context.current()).toBeUndefined();
  });

  it('a continuation that outlives its run sees no frame once every run has ended', async () => {
    const context = new FrameContext<string>();
    let later!: Promise<string | undefined>;
    await context.run('a', async () => {
      later = new Promise((resolve) => setTimeout(() => resolve(context.current()), 20));
    });
    expect(await later).toBeUndefined();
  });

  it('is the frame again in a later run (switched back on), and a failed run ends like any other', async () => {
    const context = new FrameContext<string>();
    await expect(context.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(context.current()).toBeUndefined();
    expect(await context.run('b', async () => (await tick(), context.current()))).toBe('b');
  });
});
