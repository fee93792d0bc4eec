import { describe, expect, it } from 'vitest';
import { buildChildEnv } from './env.js';
import { ProcessRegistry, reach, type JobParty, type JobRecord } from './process-registry.js';
import { startCommand } from './run.js';

const start = (script: string) =>
  startCommand({ script, label: script, host: 'gateway', workspace: '/tmp', cwd: '/tmp', env: buildChildEnv({}, { home: '/tmp' }), maxOutputChars: 1000, killGraceMs: 100 });

const party = (sessionKey: string, senderId: string | undefined, isOwner = false, provider = 'discord'): JobParty => ({ sessionKey, provider, senderId, isOwner });
const ann = party('s1', 'ann');

describe('ProcessRegistry', () => {
  it('keeps a finished job for the TTL, then forgets it', async () => {
    let now = 0;
    const registry = new ProcessRegistry(30 * 60_000, () => now);
    const job = start('true');
    registry.add(ann, job);
    await job.done;
    now = job.endedAt! + 30 * 60_000 - 1;
    expect(registry.list(ann).map((r) => r.job.id)).toEqual([job.id]);
    now = job.endedAt! + 30 * 60_000;
    expect(registry.list(ann)).toEqual([]);
    expect(registry.lookup(ann, job.id)).toEqual({ ok: false, reason: 'not-found' });
  });

  it('never forgets a running job, and answers only its session and its starter', async () => {
    let now = 0;
    const registry = new ProcessRegistry(1000, () => now);
    const job = start('sleep 30');
    registry.add(ann, job);
    now = Date.now() + 10 * 60 * 60_000;
    expect(registry.lookup(ann, job.id)).toMatchObject({ ok: true, record: { job } });
    expect(registry.lookup(party('s2', 'ann'), job.id)).toEqual({ ok: false, reason: 'not-found' });
    expect(registry.lookup(party('s1', 'bob'), job.id)).toEqual({ ok: false, reason: 'not-yours' });
    expect(registry.remove(party('s2', 'ann'), job.id)).toBe(false);
    expect(registry.remove(party('s1', 'bob'), job.id)).toBe(false);
    expect(registry.list(party('s1', 'bob'))).toEqual([]);
    expect(registry.running()).toEqual([job]);
    expect(registry.remove(ann, job.id)).toBe(true);
    await job.done;
    expect(job.status).toBe('killed');
  });
});

describe('who reaches a job (reach)', () => {
  const record = (startedBy: { provider: string; senderId: string | undefined }): JobRecord => ({ sessionKey: 's1', startedBy, job: {} as JobRecord['job'], backgrounded: true });
  it.each([
    ['the starter', { provider: 'discord', senderId: 'ann' }, party('s1', 'ann'), 'yes'],
    ['the starter, spelled with other case and spaces', { provider: 'discord', senderId: 'U1ANN' }, party('s1', ' u1ann ', false, 'Discord'), 'yes'],
    ['another sender in the same session', { provider: 'discord', senderId: 'ann' }, party('s1', 'bob'), 'not-yours'],
    ['the same id on another provider', { provider: 'slack', senderId: 'ann' }, party('s1', 'ann'), 'not-yours'],
    ['an owner in the same session', { provider: 'discord', senderId: 'ann' }, party('s1', 'root', true), 'yes'],
    ['an owner in another session', { provider: 'discord', senderId: 'ann' }, party('s2', 'root', true), 'not-found'],
    ['the starter in another session', { provider: 'discord', senderId: 'ann' }, party('s2', 'ann'), 'not-found'],
    ['a caller without a sender', { provider: 'discord', senderId: 'ann' }, party('s1', undefined), 'not-yours'],
    ['a job without a sender, a caller without one', { provider: 'discord', senderId: undefined }, party('s1', undefined), 'not-yours'],
    ['a job without a sender, an owner', { provider: 'discord', senderId: undefined }, party('s1', 'root', true), 'yes'],
    ['an empty sender id matches nothing', { provider: 'discord', senderId: '' }, party('s1', ''), 'not-yours'],
    ['a cron job reaches what it started', { provider: 'discord', senderId: 'cron:j1' }, party('s1', 'cron:j1'), 'yes'],
    ["a cron job does not reach its creator's job", { provider: 'discord', senderId: 'ann' }, party('s1', 'cron:j1'), 'not-yours'],
  ] as const)('%s → %s', (_name, startedBy, caller, expected) => {
    expect(reach(record(startedBy), caller)).toBe(expected);
  });
});
