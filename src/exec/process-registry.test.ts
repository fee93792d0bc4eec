import { describe, expect, it } from 'vitest';
import { buildChildEnv } from './env.js';
import { ProcessRegistry } from './process-registry.js';
import { startCommand } from './run.js';

const start = (script: string) =>
  startCommand({ script, label: script, host: 'gateway', workspace: '/tmp', cwd: '/tmp', env: buildChildEnv({}, { home: '/tmp' }), maxOutputChars: 1000, killGraceMs: 100 });

describe('ProcessRegistry', () => {
  it('keeps a finished job for the TTL, then forgets it', async () => {
    let now = 0;
    const registry = new ProcessRegistry(30 * 60_000, () => now);
    const job = start('true');
    registry.add('s1', job);
    await job.done;
    now = job.endedAt! + 30 * 60_000 - 1;
    expect(registry.list('s1').map((r) => r.job.id)).toEqual([job.id]);
    now = job.endedAt! + 30 * 60_000;
    expect(registry.list('s1')).toEqual([]);
    expect(registry.get('s1', job.id)).toBeUndefined();
  });

  it('never forgets a running job, and answers only the owning session', async () => {
    let now = 0;
    const registry = new ProcessRegistry(1000, () => now);
    const job = start('sleep 30');
    registry.add('s1', job);
    now = Date.now() + 10 * 60 * 60_000;
    expect(registry.get('s1', job.id)?.job).toBe(job);
    expect(registry.get('s2', job.id)).toBeUndefined();
    expect(registry.remove('s2', job.id)).toBe(false);
    expect(registry.running()).toEqual([job]);
    expect(registry.remove('s1', job.id)).toBe(true);
    await job.done;
    expect(job.status).toBe('killed');
  });
});
