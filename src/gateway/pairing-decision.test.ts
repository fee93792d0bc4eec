import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openWardenStore } from '../app/migrations.js';
import { PairingStore } from '../cluster/pairing.js';
import type { Store } from '../store/store.js';
import { decidePairing, pairingDecisionText, type PairingDecisionInput } from './pairing-decision.js';

const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

async function open(target: { dataDir: string; url: string | undefined }): Promise<PairingStore> {
  const opened = await openWardenStore(target);
  if (!opened.ok) throw new Error(opened.error.message);
  stores.push(opened.store);
  return new PairingStore(opened.store.db);
}

const OWNER = { userId: 'olga', isOwner: true };
const STRANGER = { userId: 'mallory', isOwner: false };

describe.each(ENGINES)('an owner decides a pairing code (/pair and the card buttons) on %s', (engine) => {
  // Each row: who decides what, on which platform, with which code; the outcome; whether bob is paired after.
  it.each<[string, Omit<PairingDecisionInput, 'code'> & { code?: string }, string, boolean]>([
    ['an owner approves: bob is paired', { provider: 'discord', decision: 'approve', by: OWNER }, 'approved', true],
    ['an owner denies: bob is not paired', { provider: 'discord', decision: 'deny', by: OWNER }, 'denied', false],
    ['a non-owner approves: refused, nothing changes', { provider: 'discord', decision: 'approve', by: STRANGER }, 'not-owner', false],
    ['a non-owner denies: refused, nothing changes', { provider: 'discord', decision: 'deny', by: STRANGER }, 'not-owner', false],
    ['an owner on another platform: refused', { provider: 'slack', decision: 'approve', by: OWNER }, 'other-platform', false],
    ['a code nobody was given', { provider: 'discord', decision: 'approve', by: OWNER, code: 'ZZZZZZZZ' }, 'unknown-code', false],
    ['a forged code', { provider: 'discord', decision: 'approve', by: OWNER, code: "' OR 1=1 --" }, 'unknown-code', false],
  ])('%s', async (_name, input, kind, paired) => {
    const store = await open(await freshStoreTarget(engine));
    const asked = await store.request('discord', 'bob', 'Bob');
    if (asked.kind !== 'created') throw new Error('no code');
    const outcome = await decidePairing(store, { ...input, code: input.code ?? asked.code });
    expect(outcome.kind).toBe(kind);
    expect(await store.isPaired('discord', 'bob')).toBe(paired);
    // A refused attempt leaves the request for an owner; a decision consumes it.
    const stillPending = (await store.pending('discord')).length === 1;
    expect(stillPending).toBe(kind !== 'approved' && kind !== 'denied');
  });

  // Two instances share a store on PostgreSQL; one SQLite file has one Warden, so there the two racing clicks come through one handle.
  it('exactly one decision wins when two owners click at once', async () => {
    const target = await freshStoreTarget(engine);
    const a = await open(target);
    const b = engine === 'postgres' ? await open(target) : a;
    const asked = await a.request('discord', 'bob', 'Bob');
    if (asked.kind !== 'created') throw new Error('no code');
    const outcomes = await Promise.all([
      decidePairing(a, { provider: 'discord', code: asked.code, decision: 'approve', by: OWNER }),
      decidePairing(b, { provider: 'discord', code: asked.code, decision: 'deny', by: { userId: 'otto', isOwner: true } }),
    ]);
    const kinds = outcomes.map((o) => o.kind).sort();
    expect(kinds.filter((k) => k === 'approved' || k === 'denied')).toHaveLength(1);
    expect(kinds).toContain('unknown-code');
    expect(await b.isPaired('discord', 'bob')).toBe(kinds.includes('approved'));
  });
});

describe('what the decider is told', () => {
  it.each([
    [{ kind: 'approved', userId: '7', userName: 'Bob' } as const, 'Paired Bob (7): their direct messages are let in from now on.'],
    [{ kind: 'denied', userId: '7' } as const, 'Denied the pairing request of 7: they are not let in.'],
    [{ kind: 'not-owner' } as const, 'Only an owner of this Warden can decide pairing requests.'],
    [{ kind: 'other-platform' } as const, 'That code was handed out on another platform; approve it there.'],
    [{ kind: 'unknown-code' } as const, 'No pairing request has that code (it may have expired or been decided already).'],
  ])('%o', (outcome, text) => expect(pairingDecisionText(outcome)).toBe(text));
});
