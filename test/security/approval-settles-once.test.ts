// One close of an approval reaches this process's waiting call, its cards and the bus
// (`approval.closed`: deferred-call claims, card edits, metrics, the pending feed) exactly once,
// whichever paths learn of it and in whichever order: the process's own decision, its timer,
// an aborted or withdrawn call, a takeover of a dead instance's request, and the observers of
// closes written elsewhere (LISTEN/NOTIFY on PostgreSQL, where the deciding process hears its own
// NOTIFY too; the waiters' poll and the external watcher on SQLite).
//
// Each case is a race: the first path writes the close and is then held between its write and
// its own settling until an observer has settled the close (the interleaving seen under load:
// the NOTIFY arriving before the decision path got on); the second path runs meanwhile. The
// first writer's decision wins, the later path answers "already resolved", and the close is
// seen once.
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { approvalsInAnotherThread } from '../../src/app/testing.js';
import { ApprovalService, type ApprovalServiceOptions } from '../../src/approvals/service.js';
import type { ApprovalOutcome, ApprovalRequest, ApprovalRequestContext, ApprovalRequestInput, ApprovalResolution, DeferredCallSpec } from '../../src/approvals/types.js';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Db, StoreEngine } from '../../src/store/db.js';
import type { Store } from '../../src/store/store.js';
import type { TurnContext } from '../../src/policy/context.js';
import { ENGINES, freshStoreTarget } from '../store-engines.js';

const RAW = { owners: { discord: ['owner-1'] }, approvals: { waitSec: 0 } };
const CTX: ApprovalRequestContext = { agentId: 'main', sessionKey: 'agent:main:discord:channel:42', provider: 'discord', channelId: '42', requesterId: 'user-7' };
const TURN: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', channelId: '42', senderId: 'user-7', senderIsOwner: false, spawnDepth: 0 };
const SPEC: DeferredCallSpec = { tool: 'exec', args: { command: 'make deploy' }, toolCallId: 'call-1', origin: 'turn', turn: TURN, surface: ['exec'] };
const input = (timeoutMs: number): ApprovalRequestInput => ({ kind: 'exec', tool: 'exec', title: 'Run a command', preview: 'make deploy', fullText: `make deploy ${Math.random()}`, allowedDecisions: ['allow-once', 'deny'], timeoutMs });
const CLOSING_AUDIT = ['approval.resolved', 'approval.expired', 'approval.cancelled', 'approval.interrupted'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The store as the service sees it, with a hold: once armed for an id, the path whose
 * conditional write closes that request stops once the write has committed and, on a shared
 * store, been announced (after its transaction, when it writes inside one; else after the
 * NOTIFY that follows it), before it settles, until released.
 */
function holdable(db: Db) {
  const inTx = new AsyncLocalStorage<{ closed: boolean }>();
  let armed: { id: string; reached: () => void; gate: Promise<void> } | undefined;
  let unannounced = false;
  let failNotify = false;
  const hit = async () => {
    const hold = armed!;
    armed = undefined;
    hold.reached();
    await hold.gate;
  };
  const closes = (sql: string, params: unknown) => armed !== undefined && sql.startsWith('UPDATE approvals SET status') && Array.isArray(params) && params[3] === armed.id;
  const wrapped: Db = {
    engine: db.engine,
    shared: db.shared,
    forUpdate: db.forUpdate,
    get open() {
      return db.open;
    },
    get inTransaction() {
      return db.inTransaction;
    },
    all: (sql, params) => db.all(sql, params),
    get: (sql, params) => db.get(sql, params),
    value: (sql, params) => db.value(sql, params),
    exec: (sql) => db.exec(sql),
    exclusive: (fn) => db.exclusive(fn),
    // The approval paths write through run/tx; a batch passes through unheld.
    batch: (steps) => db.batch(steps),
    notify: async (channel, payload) => {
      if (failNotify) {
        failNotify = false;
        throw new Error('connection terminated');
      }
      await db.notify(channel, payload);
      if (unannounced && !inTx.getStore() && payload === armed?.id) {
        unannounced = false;
        await hit();
      }
    },
    listen: (channel, handler) => db.listen(channel, handler),
    observe: (observer) => db.observe(observer),
    close: () => db.close(),
    run: async (sql, params) => {
      const result = await db.run(sql, params);
      if (result.changes === 1 && closes(sql, params)) {
        const tx = inTx.getStore();
        if (tx) tx.closed = true;
        else if (db.shared) unannounced = true;
        else await hit();
      }
      return result;
    },
    tx: async (fn) => {
      if (inTx.getStore()) return db.tx(fn);
      const tx = { closed: false };
      const value = await db.tx(() => inTx.run(tx, fn));
      if (tx.closed) await hit();
      return value;
    },
  };
  return {
    db: wrapped,
    /** The next NOTIFY fails, as on a connection the server dropped. */
    failNextNotify() {
      failNotify = true;
    },
    /** Holds the next close of `id`: `reached` once its write committed; `release` lets the path go on. */
    arm(id: string) {
      let reached!: () => void;
      let release!: () => void;
      const atHold = new Promise<void>((r) => (reached = r));
      armed = { id, reached, gate: new Promise<void>((r) => (release = r)) };
      return { reached: atHold, release };
    },
  };
}

interface Instance {
  svc: ApprovalService;
  closed: ApprovalRequest[];
  emitted: Array<{ type: string; id: string }>;
  hold: ReturnType<typeof holdable>;
}

async function instance(target: { dataDir: string; url: string | undefined }, cleanups: Array<() => unknown>, extra: Partial<ApprovalServiceOptions> = {}): Promise<Instance> {
  const parsed = parseConfig(RAW);
  if (!parsed.ok) throw parsed.error;
  const opened = await openWardenStore({ dataDir: target.dataDir, url: target.url });
  if (!opened.ok) throw new Error(opened.error.message);
  const hold = holdable(opened.store.db);
  const store: Store = Object.assign(Object.create(opened.store) as Store, { db: hold.db });
  const events = new EventBus();
  const svc = new ApprovalService({ store, config: parsed.value.config, events, pollMs: 10, externalPollMs: 10, ...extra });
  cleanups.push(() => opened.store.close(), () => svc.shutdown());
  const closed: ApprovalRequest[] = [];
  const emitted: Instance['emitted'] = [];
  events.on('approval.closed', ({ request }) => closed.push(request));
  for (const type of ['approval.resolved', 'approval.expired', 'approval.interrupted'] as const) events.on(type, ({ request }) => emitted.push({ type, id: request.id }));
  return { svc, closed, emitted, hold };
}

/** Another process deciding on the same store (on SQLite in a thread of its own: one thread cannot hold two connections to the file). */
async function otherProcess(engine: StoreEngine, target: { dataDir: string; url: string | undefined }, cleanups: Array<() => unknown>) {
  if (engine === 'postgres') return (await instance(target, cleanups)).svc;
  const other = await approvalsInAnotherThread(target.dataDir, RAW);
  cleanups.push(() => other.close());
  return other;
}

type Report = 'won' | { lost: ApprovalOutcome } | 'silent';
interface Race {
  a: Instance;
  other: Pick<ApprovalService, 'resolveAsOperator'>;
  id: string;
  expiresAt: number;
  abort: AbortController;
}
interface Path {
  name: string;
  outcome: ApprovalOutcome;
  decidedBy?: string;
  /** Closes in this process, so it can be held between its write and its settling. */
  local: boolean;
  /** Answers whether it won (a decision, a withdrawal, a takeover); an abort or a timer answers nobody. */
  answers: boolean;
  /** The event this process emits besides `approval.closed` when this path wins here. */
  event?: 'approval.resolved' | 'approval.expired' | 'approval.interrupted';
  run(race: Race): Promise<Report>;
}

const decision = (r: Awaited<ReturnType<ApprovalService['resolve']>>): Report => {
  if (r.kind === 'resolved') return 'won';
  if (r.kind === 'already-resolved') return { lost: r.outcome };
  throw new Error(`unexpected answer ${r.kind}`);
};
const PATHS = {
  resolve: { name: 'a click at this instance', outcome: 'allow-once', decidedBy: 'discord:owner-1', local: true, answers: true, event: 'approval.resolved', run: async (r) => decision(await r.a.svc.resolve(r.id, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } })) },
  operator: { name: 'the operator at this instance', outcome: 'deny', decidedBy: 'cli:op', local: true, answers: true, event: 'approval.resolved', run: async (r) => decision(await r.a.svc.resolveAsOperator(r.id, 'deny', 'op')) },
  elsewhere: { name: 'a decision in another process', outcome: 'deny', decidedBy: 'cli:other', local: false, answers: true, run: async (r) => decision(await r.other.resolveAsOperator(r.id, 'deny', 'other')) },
  withdraw: { name: 'a withdrawal', outcome: 'cancelled', local: true, answers: true, run: async (r) => ((await r.a.svc.cancel(r.id, 'withdrawn')) ? 'won' : { lost: (await r.a.svc.get(r.id))!.status as ApprovalOutcome }) },
  abort: {
    name: 'an abort of the waiting call',
    outcome: 'cancelled',
    local: true,
    answers: false,
    run: async (r) => {
      r.abort.abort();
      return 'silent';
    },
  },
  timeout: {
    name: 'the expiry timer',
    outcome: 'expired',
    local: true,
    answers: false,
    event: 'approval.expired',
    run: async (r) => {
      await sleep(Math.max(0, r.expiresAt - Date.now()) + 40);
      return 'silent';
    },
  },
} satisfies Record<string, Path>;

const pairs = (names: readonly (keyof typeof PATHS)[]) => names.flatMap((first) => names.filter((second) => second !== first).map((second) => [PATHS[first].name, PATHS[second].name, first, second] as const));
/** The timeout: short when the timer goes first, past the first path's hold when it goes second, out of the way otherwise. */
const timeoutFor = (first: string, second: string) => (first === 'timeout' ? 400 : second === 'timeout' ? 1000 : 60_000);

/** Runs `first` (held after its write until an observer settled the close, when local), then `second`, and checks the close was seen once. */
async function race(
  r: Omit<Race, 'id' | 'expiresAt'>,
  open: () => Promise<ApprovalRequest>,
  first: Path,
  second: Path,
  options: { waiting?: (id: string) => Promise<ApprovalResolution>; observed: boolean },
) {
  const { a } = r;
  const { waiting, observed } = options;
  const request = await open();
  const id = request.id;
  const full: Race = { ...r, id, expiresAt: request.expiresAt };
  const hold = first.local ? a.hold.arm(id) : undefined;
  const resolution = waiting?.(id);
  // The waiting call is registered before anything closes the request: the SQLite poll looks only at registered waiters.
  if (waiting) await vi.waitFor(() => expect((a.svc as unknown as { waiters: Map<string, unknown> }).waiters.has(id)).toBe(true), { timeout: 2000, interval: 5 });
  let firstReport: Promise<Report>;
  if (hold) {
    firstReport = first.run(full);
    await hold.reached;
    // The observer of closes (this process's own NOTIFY, the poll, the watcher) settles while the first path is held.
    if (observed) await vi.waitFor(() => expect(a.closed.filter((c) => c.id === id).length).toBeGreaterThan(0), { timeout: 3000, interval: 5 });
  } else {
    firstReport = Promise.resolve(await first.run(full));
  }
  const secondReport = await second.run(full);
  hold?.release();
  expect(await firstReport).toEqual(first.answers ? 'won' : 'silent');
  if (secondReport !== 'silent') expect(secondReport).toEqual({ lost: first.outcome });
  if (resolution) expect(await resolution).toMatchObject({ id, outcome: first.outcome, ...(first.decidedBy ? { decidedBy: first.decidedBy } : {}) });
  await vi.waitFor(() => expect(a.closed.filter((c) => c.id === id).length).toBeGreaterThan(0), { timeout: 3000, interval: 5 });
  // Stray observers (a late NOTIFY, the next poll or watch) have had their turn.
  await sleep(80);
  const closes = a.closed.filter((c) => c.id === id);
  expect(closes.map((c) => [c.status, c.decidedBy])).toEqual([[first.outcome, first.decidedBy]]);
  expect((await a.svc.audit.list({ subject: id })).filter((e) => CLOSING_AUDIT.includes(e.type))).toHaveLength(1);
  expect(a.emitted.filter((e) => e.id === id).map((e) => e.type)).toEqual(first.event ? [first.event] : []);
}

describe.each(ENGINES)('one close of an approval, seen once, on %s', (engine) => {
  const cleanups: Array<() => unknown> = [];
  let a: Instance;
  let other: Pick<ApprovalService, 'resolveAsOperator'>;
  beforeAll(async () => {
    const target = await freshStoreTarget(engine);
    a = await instance(target, cleanups);
    other = await otherProcess(engine, target, cleanups);
  });
  afterAll(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  describe('a call waiting at this instance', () => {
    it.each(pairs(['resolve', 'operator', 'elsewhere', 'withdraw', 'abort', 'timeout']))('%s, then %s', async (_f, _s, first, second) => {
      const abort = new AbortController();
      await race(
        { a, other, abort },
        () => a.svc.open(input(timeoutFor(first, second)), CTX),
        PATHS[first],
        PATHS[second],
        { waiting: (id) => a.svc.wait(id, abort.signal), observed: true },
      );
    });
  });

  describe('a deferred call this instance watches (no call waits; the runner hears the close)', () => {
    it.each(pairs(['resolve', 'operator', 'elsewhere', 'withdraw', 'timeout']))('%s, then %s', async (_f, _s, first, second) => {
      await race(
        { a, other, abort: new AbortController() },
        async () => {
          const answer = await a.svc.requester(CTX, { deferred: SPEC }).requestOrDefer!(input(timeoutFor(first, second)));
          return (await a.svc.get(answer.id))!;
        },
        PATHS[first],
        PATHS[second],
        { observed: true },
      );
    });
  });
});

describe.each(ENGINES)('a dead instance\'s request taken over, on %s', (engine) => {
  const takeover: Path = {
    name: 'the takeover by this instance',
    outcome: 'interrupted',
    local: true,
    answers: true,
    event: 'approval.interrupted',
    run: async (r) => ((await r.a.svc.recover()).interrupted.some((q) => q.id === r.id) ? 'won' : { lost: (await r.a.svc.get(r.id))!.status as ApprovalOutcome }),
  };
  const cases = [
    [takeover, PATHS.resolve],
    [takeover, PATHS.withdraw],
    [PATHS.resolve, takeover],
    [PATHS.withdraw, takeover],
  ].map(([first, second]) => [first!.name, second!.name, first!, second!] as const);

  it.each(cases)('%s, then %s', async (_f, _s, first, second) => {
    const cleanups: Array<() => unknown> = [];
    try {
      const target = await freshStoreTarget(engine);
      // The instance that posted the card stops without a word (its waiter stays recorded).
      const gone: Array<() => unknown> = [];
      const dead = await instance(target, gone);
      const request = await dead.svc.open(input(60_000), CTX);
      while (gone.length) await gone.pop()!();
      const a = await instance(target, cleanups, { isProcessAlive: () => false });
      const other = await otherProcess(engine, target, cleanups);
      // The takeover reads the request back, so it is the row of the dead instance's card.
      await race({ a, other, abort: new AbortController() }, async () => request, first, second, { observed: false });
      const done = await a.svc.get(request.id);
      expect(done?.status).toBe(first.outcome);
    } finally {
      while (cleanups.length) await cleanups.pop()!();
    }
  });
});

describe('on postgres, a close is written only with its announcement', () => {
  it.each<[string, (svc: ApprovalService, id: string) => Promise<unknown>]>([
    ['a withdrawal', (svc, id) => svc.cancel(id, 'withdrawn')],
    ['a click', (svc, id) => svc.resolve(id, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } })],
  ])('%s whose NOTIFY fails leaves the request pending; the next close reaches the call waiting elsewhere', async (_what, close) => {
    const cleanups: Array<() => unknown> = [];
    try {
      const target = await freshStoreTarget('postgres');
      const waiter = await instance(target, cleanups);
      const a = await instance(target, cleanups);
      const request = await waiter.svc.open(input(60_000), CTX);
      const waiting = waiter.svc.wait(request.id);
      await vi.waitFor(() => expect((waiter.svc as unknown as { waiters: Map<string, unknown> }).waiters.has(request.id)).toBe(true), { timeout: 2000, interval: 5 });
      a.hold.failNextNotify();
      await expect(close(a.svc, request.id)).rejects.toThrow('connection terminated');
      // Not closed unannounced: the instance whose call waits would never hear of it.
      expect((await a.svc.get(request.id))?.status).toBe('pending');
      expect(await a.svc.resolveAsOperator(request.id, 'deny', 'op')).toMatchObject({ kind: 'resolved' });
      expect(await waiting).toMatchObject({ outcome: 'deny', decidedBy: 'cli:op' });
      expect(waiter.closed.map((c) => c.status)).toEqual(['deny']);
    } finally {
      while (cleanups.length) await cleanups.pop()!();
    }
  });
});
