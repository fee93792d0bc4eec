import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { config } from '../policy/testing.js';
import { openStore, type Store } from '../store/index.js';
import { channelTurn } from './testing.js';
import { childTurnFrom, INHERITED_POLICY_VERSION, SubagentRunStore, type SubagentRunRecord } from './subagent-runs.js';

let dir: string;
let store: Store;
let runs: SubagentRunStore;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'warden-subagent-runs-'));
  const opened = openStore({ dataDir: dir });
  if (!opened.ok) throw new Error(opened.error.message);
  store = opened.store;
  runs = new SubagentRunStore(store.db);
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

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

describe('SubagentRunStore', () => {
  it('keeps the envelope, the task and the context exactly as spawned', () => {
    runs.insert(record());
    const reopened = openStore({ dataDir: dir });
    if (!reopened.ok) throw new Error(reopened.error.message);
    try {
      expect(new SubagentRunStore(reopened.store.db).byChildKey('agent:main:subagent:r1')).toEqual({ ...record(), result: undefined, endedAt: undefined, deliveredAt: undefined });
    } finally {
      reopened.store.close();
    }
  });

  it('keeps "no ceiling" (parent without a restrictive allowlist) apart from "an empty ceiling"', () => {
    runs.insert(record({ runId: 'open', inherited: { deny: [] } }));
    runs.insert(record({ runId: 'none', inherited: { allow: [], deny: [] } }));
    expect(runs.get('open')!.inherited).toEqual({ deny: [] });
    expect(runs.get('none')!.inherited).toEqual({ allow: [], deny: [] });
  });

  it('fails closed on an envelope that does not parse: an empty ceiling, not none', () => {
    runs.insert(record({ runId: 'bad' }));
    store.db.prepare("UPDATE subagent_runs SET inherited_deny = 'not json' WHERE run_id = 'bad'").run();
    expect(runs.get('bad')!.inherited).toEqual({ allow: [], deny: [] });
    store.db.prepare(`UPDATE subagent_runs SET inherited_deny = '[]', inherited_allow = '[1]' WHERE run_id = 'bad'`).run();
    expect(runs.get('bad')!.inherited).toEqual({ allow: [], deny: [] });
  });

  it('a killed run stays killed when its turn ends, and keeps the reply as its result', () => {
    runs.insert(record());
    expect(runs.kill('r1')).toBe(true);
    expect(runs.kill('r1')).toBe(false);
    runs.end('r1', 'done', 'partial', 2_000);
    expect(runs.get('r1')).toMatchObject({ status: 'killed', result: 'partial', endedAt: 2_000 });
  });

  it('interrupts only the running runs whose owner is gone', () => {
    runs.insert(record({ runId: 'gone', owner: { pid: 1, instance: 'dead' } }));
    runs.insert(record({ runId: 'alive', owner: { pid: 2, instance: 'live' } }));
    runs.insert(record({ runId: 'ended', owner: { pid: 1, instance: 'dead' } }));
    runs.end('ended', 'done', 'fine', 1_500);
    const out = runs.interruptOrphans((o) => o.instance === 'dead', (r) => `lost ${r.runId}`, 3_000);
    expect(out.map((r) => [r.runId, r.status, r.result, r.endedAt])).toEqual([['gone', 'interrupted', 'lost gone', 3_000]]);
    expect(runs.get('alive')!.status).toBe('running');
    expect(runs.get('ended')).toMatchObject({ status: 'done', result: 'fine' });
  });

  it('hands each ended result to the parent once', () => {
    runs.insert(record({ runId: 'a' }));
    runs.insert(record({ runId: 'b' }));
    runs.insert(record({ runId: 'other', parentKey: 'agent:main:discord:channel:c2' }));
    runs.end('a', 'done', 'A', 2_000);
    runs.end('other', 'done', 'O', 2_000);
    expect(runs.takeUndelivered(PARENT, 5_000).map((r) => r.runId)).toEqual(['a']);
    expect(runs.takeUndelivered(PARENT, 5_001)).toEqual([]);
    runs.end('b', 'failed', 'B', 6_000);
    expect(runs.takeUndelivered(PARENT, 7_000).map((r) => [r.runId, r.status])).toEqual([['b', 'failed']]);
    expect(runs.ofParent(PARENT).map((r) => [r.runId, r.deliveredAt])).toEqual([
      ['a', 5_000],
      ['b', 7_000],
    ]);
  });

  it('refuses a second run under the same child session key', () => {
    runs.insert(record({ runId: 'x', childKey: 'agent:main:subagent:same' }));
    expect(() => runs.insert(record({ runId: 'y', childKey: 'agent:main:subagent:same' }))).toThrow(/UNIQUE/);
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
