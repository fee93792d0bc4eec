import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { config } from '../policy/testing.js';
import { openWardenStore } from '../app/migrations.js';
import type { Store } from '../store/index.js';
import { channelTurn } from '../app/agent-testing.js';
import { childTurnFrom, INHERITED_POLICY_VERSION, SubagentRunStore, type SubagentRunRecord } from './subagent-runs.js';

const PARENT = 'agent:main:discord:channel:c1';
const record = (over: Partial<SubagentRunRecord> = {}): SubagentRunRecord => {
  const runId = over.runId ?? 'r1';
  const { inherited: _i, ...turn } = channelTurn({ spawnDepth: 1, senderIsOwner: true });
  return {
    runId,
    childKey: `agent:main:subagent:${runId}`,
    parentKey: PARENT,
    agentId: 'main',
    label: 'count',
    task: 'count the files',
    depth: 1,
    role: 'leaf',
    inherited: { allow: ['read', 'sessions_yield'], deny: ['exec'] },
    policyVersion: INHERITED_POLICY_VERSION,
    turn,
    status: 'running',
    owner: { pid: 4242, instance: 'old' },
    startedAt: 1_000,
    ...over,
  };
};

describe.each(ENGINES)('SubagentRunStore on %s', (engine) => {
  let where: { dataDir: string; url: string | undefined };
  let store: Store;
  let runs: SubagentRunStore;

  const openAt = async () => {
    const opened = await openWardenStore({ dataDir: where.dataDir, url: where.url });
    if (!opened.ok) throw new Error(opened.error.message);
    return opened.store;
  };

  beforeEach(async () => {
    where = await freshStoreTarget(engine);
    store = await openAt();
    runs = new SubagentRunStore(store.db);
  });
  afterEach(async () => {
    await store.close();
  });

  it('keeps the envelope, the task and the context exactly as spawned', async () => {
    await runs.insert(record());
    const reopened = await openAt();
    try {
      expect(await new SubagentRunStore(reopened.db).byChildKey('agent:main:subagent:r1')).toEqual({ ...record(), result: undefined, endedAt: undefined, deliveredAt: undefined });
    } finally {
      await reopened.close();
    }
  });

  it('keeps "no ceiling" (parent without a restrictive allowlist) apart from "an empty ceiling"', async () => {
    await runs.insert(record({ runId: 'open', inherited: { deny: [] } }));
    await runs.insert(record({ runId: 'none', inherited: { allow: [], deny: [] } }));
    expect((await runs.get('open'))!.inherited).toEqual({ deny: [] });
    expect((await runs.get('none'))!.inherited).toEqual({ allow: [], deny: [] });
  });

  it('fails closed on an envelope that does not parse: an empty ceiling, not none', async () => {
    await runs.insert(record({ runId: 'bad' }));
    await store.db.run("UPDATE subagent_runs SET inherited_deny = 'not json' WHERE run_id = 'bad'");
    expect((await runs.get('bad'))!.inherited).toEqual({ allow: [], deny: [] });
    await store.db.run(`UPDATE subagent_runs SET inherited_deny = '[]', inherited_allow = '[1]' WHERE run_id = 'bad'`);
    expect((await runs.get('bad'))!.inherited).toEqual({ allow: [], deny: [] });
  });

  it('a killed run stays killed when its turn ends, and keeps the reply as its result', async () => {
    await runs.insert(record());
    expect(await runs.kill('r1')).toBe(true);
    expect(await runs.kill('r1')).toBe(false);
    await runs.end('r1', 'done', 'partial', 2_000);
    expect(await runs.get('r1')).toMatchObject({ status: 'killed', result: 'partial', endedAt: 2_000 });
  });

  it('interrupts only the running runs whose owner is gone', async () => {
    await runs.insert(record({ runId: 'gone', owner: { pid: 1, instance: 'dead' } }));
    await runs.insert(record({ runId: 'alive', owner: { pid: 2, instance: 'live' } }));
    await runs.insert(record({ runId: 'ended', owner: { pid: 1, instance: 'dead' } }));
    await runs.end('ended', 'done', 'fine', 1_500);
    const out = await runs.interruptOrphans((o) => o.instance === 'dead', (r) => `lost ${r.runId}`, 3_000);
    expect(out.map((r) => [r.runId, r.status, r.result, r.endedAt])).toEqual([['gone', 'interrupted', 'lost gone', 3_000]]);
    expect((await runs.get('alive'))!.status).toBe('running');
    expect(await runs.get('ended')).toMatchObject({ status: 'done', result: 'fine' });
  });

  it('hands each ended result to the parent once', async () => {
    await runs.insert(record({ runId: 'a' }));
    await runs.insert(record({ runId: 'b' }));
    await runs.insert(record({ runId: 'other', parentKey: 'agent:main:discord:channel:c2' }));
    await runs.end('a', 'done', 'A', 2_000);
    await runs.end('other', 'done', 'O', 2_000);
    expect((await runs.takeUndelivered(PARENT, 5_000)).map((r) => r.runId)).toEqual(['a']);
    expect(await runs.takeUndelivered(PARENT, 5_001)).toEqual([]);
    await runs.end('b', 'failed', 'B', 6_000);
    expect((await runs.takeUndelivered(PARENT, 7_000)).map((r) => [r.runId, r.status])).toEqual([['b', 'failed']]);
    expect((await runs.ofParent(PARENT)).map((r) => [r.runId, r.deliveredAt])).toEqual([
      ['a', 5_000],
      ['b', 7_000],
    ]);
  });

  it('refuses a second run under the same child session key', async () => {
    await runs.insert(record({ runId: 'x', childKey: 'agent:main:subagent:same' }));
    // SQLite says UNIQUE constraint failed, PostgreSQL duplicate key value violates unique constraint.
    await expect(runs.insert(record({ runId: 'y', childKey: 'agent:main:subagent:same' }))).rejects.toThrow(/UNIQUE constraint|unique constraint/);
  });
});

describe('childTurnFrom', () => {
  const base = record();
  // u1 is an owner: the child still never runs as one.
  const cfg = config({ owners: { discord: ['u1'] }, tools: { exec: { host: 'gateway' } } });
  it('builds the child turn from the stored envelope and depth, never as an owner', () => {
    expect(childTurnFrom(cfg, base)).toEqual({ ok: true, turn: { ...base.turn, sandboxed: false, senderIsOwner: false, spawnDepth: 1, inherited: base.inherited } });
  });

  it('acting for a sending turn: its sender, and both ceilings at once', () => {
    const checked = childTurnFrom(cfg, base, { sender: { id: 'u2', name: 'bob' }, ceiling: { allow: ['read', 'write'], deny: ['browser'] } });
    expect(checked).toMatchObject({ ok: true, turn: { senderId: 'u2', senderName: 'bob', senderIsOwner: false, spawnDepth: 1, inherited: { allow: ['read'], deny: ['exec', 'browser'] } } });
  });

  it.each([
    ['an unknown envelope version', { policyVersion: 2 }, 'its stored tool policy has version 2, not 1'],
    ['a missing envelope version', { policyVersion: 0 }, 'its stored tool policy has version 0, not 1'],
    ['no parent', { parentKey: '' }, 'its stored tool policy names no parent session'],
    ['depth 0 (a main session)', { depth: 0 }, 'its stored spawn depth 0 is not a subagent depth'],
    ['a context of another agent', { agentId: 'ops' }, 'its stored policy context does not match the run'],
    ['a context that did not parse', { turn: {} as SubagentRunRecord['turn'] }, 'its stored policy context does not match the run'],
  ])('refuses %s', (_name, over, reason) => {
    expect(childTurnFrom(cfg, { ...base, ...over })).toEqual({ ok: false, reason });
  });
});
