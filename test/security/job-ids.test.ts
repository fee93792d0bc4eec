import { afterEach, describe, expect, it } from 'vitest';
import { buildChildEnv } from '../../src/exec/env.js';
import { JOB_ID_BYTES, newJobId, type ExecJob } from '../../src/exec/job.js';
import { ProcessRegistry, type JobParty } from '../../src/exec/process-registry.js';
import { startCommand } from '../../src/exec/run.js';

/**
 * A job id is what `process` takes to reach a job; within a session it is the only thing
 * between a sender and another sender's job besides the starter check. The attacker guesses
 * ids, or waits for a collision that hands them someone else's job: ids are long enough that
 * neither works, and a colliding id is refused instead of replacing the job filed under it.
 */

const started: ExecJob[] = [];
const start = (script: string): ExecJob => {
  const job = startCommand({ script, label: script, host: 'gateway', workspace: '/tmp', cwd: '/tmp', env: buildChildEnv({}, { home: '/tmp' }), maxOutputChars: 1000, killGraceMs: 100 });
  started.push(job);
  return job;
};
const party = (senderId: string, isOwner = false): JobParty => ({ sessionKey: 's1', provider: 'discord', senderId, isOwner });

afterEach(async () => {
  for (const job of started.splice(0)) {
    job.killNow();
    await job.done;
  }
});

describe('job ids cannot be guessed', () => {
  it('carry at least 96 random bits', () => {
    expect(JOB_ID_BYTES * 8).toBeGreaterThanOrEqual(96);
    const job = start('true');
    expect(job.id).toMatch(new RegExp(`^[0-9a-f]{${JOB_ID_BYTES * 2}}$`));
  });

  it('do not repeat over many jobs', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 10_000; i++) ids.add(newJobId());
    expect(ids.size).toBe(10_000);
  });

  it.each([
    ['a short prefix of the id', (id: string) => id.slice(0, 8)],
    ['the id in upper case', (id: string) => id.toUpperCase()],
    ['the id with a trailing space', (id: string) => `${id} `],
    ['the id of 32 bits, as ids used to be', (id: string) => id.slice(-8)],
  ])('a look-up by %s finds nothing', (_name, mangle) => {
    const registry = new ProcessRegistry();
    const job = start('sleep 5');
    registry.add(party('ann'), job);
    expect(registry.lookup(party('ann'), mangle(job.id))).toEqual({ ok: false, reason: 'not-found' });
  });
});

describe('a colliding id is refused, never replaces a job', () => {
  it.each([
    ['the same sender files a second job under the id', party('ann')],
    ['another sender files a job under the id', party('bob')],
    ['an owner files a job under the id', party('root', true)],
  ])('%s: refused, and the first job stays the starter\'s', (_name, newcomer) => {
    const registry = new ProcessRegistry();
    const first = start('sleep 5');
    const second = start('sleep 5');
    (second as { id: string }).id = first.id;
    expect(registry.add(party('ann'), first)).toBeDefined();
    expect(registry.add(newcomer, second)).toBeUndefined();
    const found = registry.lookup(party('ann'), first.id);
    expect(found.ok && found.record.job).toBe(first);
    expect(registry.lookup(party('bob'), first.id)).toEqual({ ok: false, reason: 'not-yours' });
  });
});
