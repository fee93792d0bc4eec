import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../store-engines.js';
import { ApprovalService } from '../../src/approvals/service.js';
import type { ApprovalDecision, ApprovalRequest } from '../../src/approvals/types.js';
import { parseConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { ExecAllowlistStore, GATEWAY_EXECUTOR, nodeExecutor } from '../../src/exec/allowlist-store.js';
import { HookBus } from '../../src/hooks/bus.js';
import { nodeId } from '../../src/node/identity.js';
import type { TurnContext } from '../../src/policy/context.js';
import { AuditLog } from '../../src/store/audit.js';
import { openWardenStore, WARDEN_MIGRATIONS } from '../../src/app/migrations.js';
import { migrationsFor, openStore, type Store } from '../../src/store/index.js';
import { Transcripts } from '../../src/store/transcript.js';
import { CORE_IMPLEMENTATIONS } from '../../src/app/core-tools.js';
import { createExecTool } from '../../src/tools/core/exec/exec.js';
import { eraseArgs, type ToolImplementation } from '../../src/tools/types.js';
import { ToolInvoker } from '../../src/tools/invoke/chain.js';

/**
 * An allow-always grant is for the machine that asked: the gateway and its nodes share one
 * store (`store.url`), but a grant for `python3 job.py` on one host names that host's python3
 * and that host's job.py. The attacker (the model) gets a grant on one executor, then runs the
 * same command on another, hoping the card is skipped. Real exec tool, real approvals, real
 * store on both engines; nodes built as `warden node` builds them (stable id from the state dir).
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-grant-executor-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'channel', channelId: 'dev', senderIsOwner: true, senderId: 'op', spawnDepth: 0 };
const parsed = parseConfig({ owners: { web: ['op'] }, tools: { profile: 'coding', exec: { host: 'gateway' } } });
if (!parsed.ok) throw parsed.error;
const config = parsed.value.config;
const COMMAND = 'python3 job.py';

type Host = 'gateway' | 'node A' | 'node A restarted' | 'node B';

interface Case {
  name: string;
  grantOn: Host;
  /** Where the same command then runs, and whether it must ask. */
  then: Array<{ on: Host; asks: boolean }>;
}

const CASES: Case[] = [
  { name: 'a grant on the gateway is not honoured on a node', grantOn: 'gateway', then: [{ on: 'gateway', asks: false }, { on: 'node A', asks: true }, { on: 'node B', asks: true }] },
  { name: 'a grant on node A is not honoured on node B or the gateway', grantOn: 'node A', then: [{ on: 'node A', asks: false }, { on: 'node B', asks: true }, { on: 'gateway', asks: true }] },
  { name: 'node A keeps its grant after a restart (same state dir, same id)', grantOn: 'node A', then: [{ on: 'node A restarted', asks: false }, { on: 'node B', asks: true }] },
  { name: 'a grant on node B is not honoured on node A, even restarted', grantOn: 'node B', then: [{ on: 'node A', asks: true }, { on: 'node A restarted', asks: true }, { on: 'node B', asks: false }] },
];

describe.each(ENGINES)('exec allow-always grants are bound to their executor (%s store shared by gateway and nodes)', (engine) => {
  let dir: string;
  let where: { dataDir: string; url: string | undefined };
  const stores: Store[] = [];
  let approvals: ApprovalService;
  let events: EventBus;
  let requests: ApprovalRequest[];
  let decisions: ApprovalDecision[];
  let caseNo = 0;
  const deciding: Array<Promise<unknown>> = [];

  const open = async (): Promise<Store> => {
    const opened = await openWardenStore({ dataDir: where.dataDir, url: where.url });
    if (!opened.ok) throw new Error(opened.error.message);
    stores.push(opened.store);
    return opened.store;
  };

  beforeEach(async () => {
    dir = path.join(root, `${engine}-${++caseNo}`);
    mkdirSync(path.join(dir, 'workspace'), { recursive: true });
    writeFileSync(path.join(dir, 'workspace', 'job.py'), 'print("ran")\n');
    where = await freshStoreTarget(engine);
    const store = await open();
    events = new EventBus();
    approvals = new ApprovalService({ store, config, events, pollMs: 20 });
    requests = [];
    decisions = [];
    events.on('approval.requested', ({ request }) => {
      requests.push(request);
      const decision = decisions.shift() ?? 'deny';
      // Kept, so the test waits for the whole decision (its last reads included) before the store
      // closes: the call returns once the request is closed, a moment before resolve finishes.
      deciding.push(new Promise((done) => setTimeout(() => done(approvals.resolveAsOperator(request.id, decision, 'op')), 5)));
    });
  });
  afterEach(async () => {
    await Promise.all(deciding.splice(0));
    approvals.shutdown();
    for (const s of stores.splice(0)) await s.close();
  });

  /** Each host's exec tool, on its own connection to the shared store, built as its process builds it. */
  async function execOn(host: Host): Promise<ToolImplementation> {
    const store = await open();
    if (host === 'gateway') return (await CORE_IMPLEMENTATIONS.exec!.load({ config, baseDir: dir, store } as never))!;
    // A restart is a new process on the same state dir: the id is read back, not remembered.
    const stateDir = path.join(dir, host === 'node B' ? 'state-b' : 'state-a');
    const id = nodeId(stateDir);
    if (!id.ok) throw new Error(id.error);
    return eraseArgs(createExecTool({ config, allowlist: new ExecAllowlistStore(store.db, Date.now, nodeExecutor(id.id)), protect: [] }));
  }

  async function run(host: Host, decision: ApprovalDecision): Promise<{ asked: boolean; text: string }> {
    const tool = await execOn(host);
    const store = stores[0]!;
    const invoker = new ToolInvoker({ resolveTool: (id) => (id === 'exec' ? tool : undefined), hooks: new HookBus(), approvals, transcripts: new Transcripts(store.db), audit: new AuditLog(store.db), events });
    const before = requests.length;
    decisions.push(decision);
    const out = await invoker.invoke({ tool: 'exec', args: { command: COMMAND }, turn, sessionKey: 'agent:main:web:channel:dev', workspaceDir: path.join(dir, 'workspace'), loopDetection: false });
    decisions.length = 0;
    return { asked: requests.length > before, text: out.content.map((c) => (c.type === 'text' ? c.text : '')).join('') };
  }

  it.each(CASES)('$name', async ({ grantOn, then }) => {
    const granted = await run(grantOn, 'allow-always');
    expect(granted.asked).toBe(true);
    expect(granted.text).toContain('ran');
    for (const step of then) {
      const got = await run(step.on, 'deny');
      expect({ on: step.on, asked: got.asked }).toEqual({ on: step.on, asked: step.asks });
      if (step.asks) expect(got.text).not.toContain('ran');
      else expect(got.text).toContain('ran');
    }
  });

  it('a node with a fresh state dir is a new node: none of the old grants', async () => {
    await run('node A', 'allow-always');
    rmSync(path.join(dir, 'state-a'), { recursive: true, force: true });
    expect((await run('node A', 'deny')).asked).toBe(true);
  });

  it('rows from before executors are kept for the gateway only: a node never inherits them', async () => {
    // A store as the previous release left it: every migration but the executor one, and a grant in it.
    for (const s of stores.splice(0)) await s.close();
    approvals.shutdown();
    where = await freshStoreTarget(engine);
    const older = migrationsFor(engine, WARDEN_MIGRATIONS).filter((m) => m.id !== 'exec-003-executor' && m.id !== 'exec-pg-002-executor');
    const previous = await openStore({ dataDir: where.dataDir, url: where.url, migrations: older });
    if (!previous.ok) throw new Error(previous.error.message);
    await previous.store.db.run(
      `INSERT INTO exec_allowlist (id, agent_id, pattern, arg_pattern, source, created_at, last_used_at, expires_at, last_used_command, last_resolved_path, bound_files)
       VALUES ('old-1', 'main', '/usr/bin/make', NULL, 'allow-always', 1, NULL, NULL, 'make', NULL, '[]')`,
    );
    await previous.store.close();
    const store = await open();
    const gateway = new ExecAllowlistStore(store.db);
    const a = nodeId(path.join(dir, 'state-a'));
    if (!a.ok) throw new Error(a.error);
    const node = new ExecAllowlistStore(store.db, Date.now, nodeExecutor(a.id));
    expect((await gateway.list('main')).map((e) => [e.id, e.executor])).toEqual([['old-1', GATEWAY_EXECUTOR]]);
    expect(await node.list('main')).toEqual([]);
    // The node's own grant for the same pattern is a separate row; the gateway's is untouched.
    const mine = await node.add('main', { pattern: '/usr/bin/make', source: 'allow-always' });
    expect(mine.id).not.toBe('old-1');
    expect((await node.list('main')).map((e) => e.id)).toEqual([mine.id]);
    expect((await gateway.list('main')).map((e) => e.id)).toEqual(['old-1']);
    // markUsed from a node cannot touch a row that is not its own.
    await node.markUsed('old-1', 'make evil', '/tmp/make');
    expect((await gateway.list('main'))[0]!.lastUsedCommand).toBe('make');
  });
});
