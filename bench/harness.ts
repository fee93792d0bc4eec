import { closeSync, openSync, readSync } from 'node:fs';
import { constants, performance, PerformanceObserver } from 'node:perf_hooks';

export interface Timing {
  /** Per-iteration times in milliseconds. */
  median: number;
  p50: number;
  p99: number;
  /** The slowest single sample. */
  max: number;
  mean: number;
  iterations: number;
}

/** One row of the printed report: a name, its figure, and how it compares with a baseline. */
export interface BenchRow {
  name: string;
  value: string;
  note?: string;
}

/** A benchmark file's default export. It measures its own baseline in the same run. */
export type Bench = (report: (row: BenchRow) => void) => Promise<void>;

/** Runs `fn` after a warm-up and returns the distribution of single-call times. */
export async function measure(fn: () => unknown | Promise<unknown>, options: { iterations?: number; warmup?: number } = {}): Promise<Timing> {
  const iterations = options.iterations ?? 1000;
  const warmup = options.warmup ?? Math.min(200, iterations);
  for (let i = 0; i < warmup; i++) await fn();
  const samples = new Float64Array(iterations);
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await fn();
    samples[i] = performance.now() - start;
  }
  return summarize(Array.from(samples));
}

export function summarize(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
  return { median: at(0.5), p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? 0, mean, iterations: sorted.length };
}

export const fmtMs = (ms: number): string => (ms < 1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(3)} ms`);
export const fmtRatio = (x: number): string => `${x.toFixed(2)}×`;

/** A garbage-collection pause on the main thread, on the `performance.now()` clock. */
export interface GcPause {
  start: number;
  duration: number;
  kind: 'minor' | 'major' | 'incremental' | 'weakcb';
}

const GC_KINDS: Record<number, GcPause['kind']> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/**
 * Records every GC pause while it runs. Node queues the entries after the pause, outside the
 * code that was running, so recording does not allocate inside a measured call; `take()` yields
 * to the event loop once so the queued entries arrive, then hands them over.
 */
export function recordGcPauses(): { take(): Promise<GcPause[]>; stop(): void } {
  let seen: GcPause[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = ((e as PerformanceEntry & { detail?: { kind?: number } }).detail)?.kind ?? 0;
      seen.push({ start: e.startTime, duration: e.duration, kind: GC_KINDS[kind] ?? 'major' });
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async take() {
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      const taken = seen;
      seen = [];
      return taken;
    },
    stop: () => observer.disconnect(),
  };
}

/**
 * The calling thread's scheduler account from Linux's /proc/thread-self/schedstat, read into a
 * preallocated buffer (no allocation, a few µs) as milliseconds: `out[0]` on a CPU, `out[1]`
 * waiting for one while runnable (preempted by other threads or processes). The kernel adds each
 * wait when the thread gets a CPU back, so a running thread reads an exact wait; its time on a
 * CPU is brought up to date only at scheduler ticks and switches, so it lags by up to a tick.
 * Wall time less both is time the thread slept (in a synchronous call: waiting for another
 * thread, such as the GC's helpers). Null where the file is missing (not Linux, or a kernel
 * without scheduler statistics).
 */
export function schedClock(): { read(out: Float64Array): void; close(): void } | null {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return null;
  }
  const buf = Buffer.alloc(96);
  const read = (out: Float64Array): void => {
    const n = readSync(fd, buf, 0, buf.length, 0);
    let field = 0;
    let onCpu = 0;
    let waited = 0;
    for (let i = 0; i < n; i++) {
      const c = buf[i]!;
      if (c === 0x20) {
        if (++field > 1) break;
      } else if (c < 0x30 || c > 0x39) break;
      else if (field === 0) onCpu = onCpu * 10 + (c - 0x30);
      else waited = waited * 10 + (c - 0x30);
    }
    out[0] = onCpu / 1e6;
    out[1] = waited / 1e6;
  };
  return { read, close: () => closeSync(fd) };
}
