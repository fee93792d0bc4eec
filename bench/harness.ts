import { performance } from 'node:perf_hooks';

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
