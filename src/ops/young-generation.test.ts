import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// In a fresh process (the flag is process-wide, and a test worker's young generation has long
// grown): allocate objects that survive, as loading modules does, and read the size V8 gave the
// young generation.
const MODULE = fileURLToPath(new URL('./young-generation.ts', import.meta.url));
const grownMb = (hold: boolean | 'fast', count = 400_000): { before: number; after: number } => {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    const { growYoungGenerationFast, holdYoungGeneration, releaseYoungGeneration } = await import(${JSON.stringify(MODULE)});
    const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
    const before = newSpace();
    if (${hold === true}) holdYoungGeneration();
    if (${hold === 'fast'}) growYoungGenerationFast();
    const kept = [];
    for (let i = 0; i < ${count}; i++) kept.push({ i, s: 'x' + i });
    const after = newSpace();
    releaseYoungGeneration();
    process.stdout.write(JSON.stringify({ before, after }));
  `;
  return JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })) as { before: number; after: number };
};

describe('holdYoungGeneration', () => {
  it('keeps the young generation at its first size while held; without it, surviving allocations grow it', () => {
    const held = grownMb(true);
    const free = grownMb(false);
    expect(held.after).toBeLessThanOrEqual(held.before * 2);
    expect(free.after).toBeGreaterThanOrEqual(free.before * 4);
  });
});

describe('growYoungGenerationFast', () => {
  it('reaches in a few scavenges the size doubling reaches only later: fewer copies of what survives', () => {
    const fast = grownMb('fast', 60_000);
    const doubling = grownMb(false, 60_000);
    expect(fast.after).toBeGreaterThanOrEqual(doubling.after * 2);
    expect(fast.after).toBeGreaterThanOrEqual(fast.before * 8);
  });
});
