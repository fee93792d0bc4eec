import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../approvals/service.js';
import { parseConfig } from '../../config/index.js';
import { EventBus, type WardenEvents } from '../../events/events.js';
import { HOOK_FAILURE_TEXT, HookBus } from '../../hooks/bus.js';
import type { TurnContext } from '../../policy/context.js';
import { AuditLog } from '../../store/audit.js';
import { openWardenStore } from '../../app/migrations.js';
import { Transcripts } from '../../store/transcript.js';
import type { ToolImplementation } from '../types.js';
import { DENIED_TEXT } from './approval-step.js';
import { loopDetectionEnabled, ToolInvoker, type InvokeRequest, type ToolInvokerOptions } from './chain.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const CONFIG = (() => {
  const parsed = parseConfig({ owners: { discord: ['owner-1'] } });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
})();

interface Ran {
  args: Record<string, unknown>[];
  signals: AbortSignal[];
}

function tools(ran: Ran): Record<string, ToolImplementation> {
  const record = (args: Record<string, unknown>, signal: AbortSignal) => {
    ran.args.push(args);
    ran.signals.push(signal);
  };
  return {
    echo: {
      id: 'echo',
      parameters: { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer', minimum: 0 } }, required: ['text'], additionalProperties: false },
      async execute(args, ctx) {
        record(args, ctx.signal);
        return { content: [{ type: 'text', text: `echo: ${String(args.text)}` }], details: { length: String(args.text).length, apiKey: 'sk-secret' } };
      },
    },
    big: {
      id: 'big',
      parameters: { type: 'object', properties: {} },
      async execute(args, ctx) {
        record(args, ctx.signal);
        return { content: [{ type: 'text', text: Array.from({ length: 4000 }, (_, i) => `line ${i}`).join('\n') }], details: { blob: 'z'.repeat(20_000) } };
      },
    },
    hang: {
      id: 'hang',
      parameters: { type: 'object', properties: {} },
      execute(args, ctx) {
        record(args, ctx.signal);
        return new Promise(() => {});
      },
    },
    boom: {
      id: 'boom',
      parameters: { type: 'object', properties: {} },
      async execute(args, ctx) {
        record(args, ctx.signal);
        throw new Error('disk on fire');
      },
    },
    cron: {
      id: 'cron',
      parameters: { type: 'object', properties: { action: { type: 'string' } } },
      async execute(args, ctx) {
        record(args, ctx.signal);
        return { content: [{ type: 'text', text: 'jobs: none' }] };
      },
    },
  };
}

const OWNER_TURN: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', channelId: '42', senderId: 'owner-1', senderIsOwner: true, spawnDepth: 0 };
const GUEST_TURN: TurnContext = { ...OWNER_TURN, senderId: 'guest-9', senderIsOwner: false };

async function setup(extra: Partial<ToolInvokerOptions> = {}, config = CONFIG) {
  const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-chain-')) });
  if (!opened.ok) throw new Error(opened.error.message);
  const store = opened.store;
  const bus = new EventBus();
  const approvals = new ApprovalService({ store, config, events: bus, pollMs: 10 });
  cleanups.push(async () => {
    approvals.shutdown();
    await store.close();
  });
  const hooks = new HookBus();
  const ran: Ran = { args: [], signals: [] };
  const impls = tools(ran);
  const transcripts = new Transcripts(store.db);
  const invoker = new ToolInvoker({ resolveTool: (id) => impls[id], hooks, approvals, transcripts, audit: new AuditLog(store.db), events: bus, ...extra });
  const seen: Array<[keyof WardenEvents, unknown]> = [];
  for (const name of ['tool.execution.started', 'tool.execution.completed', 'tool.execution.error', 'tool.execution.blocked', 'tool.loop'] as const) {
    bus.on(name, (p) => seen.push([name, p]));
  }
  const call = (tool: string, args: unknown, more: Partial<InvokeRequest> = {}) =>
    invoker.invoke({ tool, args, turn: OWNER_TURN, sessionKey: 'agent:main:discord:channel:42', workspaceDir: '/tmp', ...more });
  /** Answers the next approval request with `decision` as the owner. */
  const answer = (decision: string) =>
    bus.on('approval.requested', ({ request }) => {
      void approvals.resolve(request.id, decision, { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    });
  return { store, bus, approvals, hooks, ran, invoker, transcripts, seen, call, answer };
}

const text = (o: { content: Array<{ type: string; text?: string }> }) => o.content.map((b) => b.text ?? '').join('\n');

describe('a call that passes every gate', () => {
  it('runs, keeps details out of what the model reads, and persists both', async () => {
    const t = await setup();
    const out = await t.call('Echo', { text: 'hi' }, { toolCallId: 'c1' });
    expect(out).toMatchObject({ tool: 'echo', toolCallId: 'c1', status: 'ok', isError: false, truncated: false, content: [{ type: 'text', text: 'echo: hi' }] });
    expect(JSON.stringify(out.content)).not.toContain('length');
    expect(out.details).toEqual({ length: 2, apiKey: '[redacted]' });
    // Written after the call answers, in call order; settled once it is in.
    await t.invoker.settled();
    const [entry] = await t.transcripts.list('agent:main:discord:channel:42');
    expect(entry).toMatchObject({ role: 'tool', tool: 'echo', toolCallId: 'c1', content: [{ type: 'text', text: 'echo: hi' }], details: { length: 2, apiKey: '[redacted]' } });
    expect(t.seen.map(([n]) => n)).toEqual(['tool.execution.started', 'tool.execution.completed']);
  });
});

describe('names and surface', () => {
  it('answers an unknown tool with the tools that exist', async () => {
    const t = await setup();
    const out = await t.call('nope', {}, { surface: { tools: ['echo', 'big'] } });
    expect(out.status).toBe('error');
    expect(out.details).toEqual({ status: 'error', tool: 'nope', error: 'Unknown tool "nope". Available tools: echo, big.' });
  });

  it('refuses a tool the surface removed, naming the step', async () => {
    const t = await setup();
    const out = await t.call('echo', { text: 'x' }, { surface: { tools: ['big'], removed: [{ tool: 'echo', by: 'tools.deny' }] } });
    expect(out).toMatchObject({ status: 'blocked', deniedReason: 'not-on-surface' });
    expect(text(out)).toBe('Tool echo is not available in this turn (removed by tools.deny). The tool call did not run.');
    expect(t.ran.args).toEqual([]);
  });
});

describe('owner-only second guard', () => {
  it('refuses cron for a non-owner even when the surface lists it, as it refuses a tool that does not exist', async () => {
    const t = await setup();
    const out = await t.call('cron', { action: 'list' }, { turn: GUEST_TURN, surface: { tools: ['cron'] } });
    const none = await t.call('crom', { action: 'list' }, { turn: GUEST_TURN, surface: { tools: ['cron'] } });
    expect(out.status).toBe(none.status);
    expect(out.deniedReason).toBeUndefined();
    expect(text(out)).toBe(text(none).replaceAll('crom', 'cron'));
    expect(text(out)).not.toMatch(/owner/);
    expect(t.ran.args).toEqual([]);
    expect((await new AuditLog(t.store.db).list({ typePrefix: 'tool.blocked' }))[0]).toMatchObject({ actor: 'discord:guest-9', data: { tool: 'cron', deniedReason: 'owner-only' } });
  });

  it('lets an owner call cron', async () => {
    const t = await setup();
    expect((await t.call('cron', { action: 'list' })).status).toBe('ok');
  });
});

describe('argument validation', () => {
  it.each([
    [{}, 'Invalid arguments for echo: text: required'],
    [{ text: 1 }, 'Invalid arguments for echo: text: expected string, got integer'],
    [{ text: 'x', n: -1, extra: true }, 'Invalid arguments for echo: n: must be ≥ 0; extra: unknown field'],
    ['just a string', 'Invalid arguments for echo: (arguments): expected object, got string'],
  ])('%j → an error result naming the field, and the tool does not run', async (args, error) => {
    const t = await setup();
    const out = await t.call('echo', args);
    expect(out.status).toBe('error');
    expect(out.details).toMatchObject({ status: 'error', tool: 'echo', error });
    expect(t.ran.args).toEqual([]);
  });
});

describe('before_tool_call', () => {
  it('a block stops the call with its reason', async () => {
    const t = await setup();
    t.hooks.on('before_tool_call', () => ({ block: true, blockReason: 'not today' }));
    const out = await t.call('echo', { text: 'x' });
    expect(out).toMatchObject({ status: 'blocked', deniedReason: 'plugin-before-tool-call', details: { status: 'blocked', deniedReason: 'plugin-before-tool-call', reason: 'not today' } });
    expect(t.ran.args).toEqual([]);
    expect(t.seen.map(([n]) => n)).toEqual(['tool.execution.blocked']);
  });

  it.each([
    ['throws', () => { throw new Error('hook bug'); }],
    ['hangs', () => new Promise(() => {})],
  ])('a hook that %s blocks the call (fail closed)', async (_label, handler) => {
    const t = await setup();
    t.hooks.on('before_tool_call', handler as never, { timeoutMs: 20 });
    const out = await t.call('echo', { text: 'x' });
    expect(out).toMatchObject({ status: 'blocked', deniedReason: 'before-tool-call-failed' });
    expect(text(out)).toBe(HOOK_FAILURE_TEXT);
    expect(t.ran.args).toEqual([]);
  });

  it('rewritten params reach the tool, and are validated again', async () => {
    const t = await setup();
    const off = t.hooks.on('before_tool_call', () => ({ params: { text: 'rewritten' } }));
    await t.call('echo', { text: 'original', n: 1 });
    expect(t.ran.args).toEqual([{ text: 'rewritten', n: 1 }]);
    off();
    t.hooks.on('before_tool_call', () => ({ params: { n: 'bad' } }));
    const out = await t.call('echo', { text: 'x' });
    expect(out.details).toMatchObject({ error: 'Invalid arguments for echo: n: expected integer, got string' });
    expect(t.ran.args).toHaveLength(1);
  });

  it('only hooks matching the tool see it', async () => {
    const t = await setup();
    t.hooks.on('before_tool_call', () => ({ block: true }), { toolMatcher: ['big'] });
    expect((await t.call('echo', { text: 'x' })).status).toBe('ok');
    expect((await t.call('big', {})).status).toBe('blocked');
  });
});

describe('hook-requested approval', () => {
  const ask = { requireApproval: { title: 'Echo something', description: 'A plugin wants a human to look' } };

  it('allow-once runs the call', async () => {
    const t = await setup();
    t.hooks.on('before_tool_call', () => ask);
    t.answer('allow-once');
    const out = await t.call('echo', { text: 'x' });
    expect(out.status).toBe('ok');
    expect(out.approval).toMatchObject({ outcome: 'allow-once', decidedBy: 'discord:owner-1' });
  });

  it('deny does not run it and tells the model not to retry', async () => {
    const t = await setup();
    t.hooks.on('before_tool_call', () => ask);
    t.answer('deny');
    const out = await t.call('echo', { text: 'x' });
    expect(out).toMatchObject({ status: 'blocked', deniedReason: 'approval-denied', details: { status: 'denied' } });
    expect(text(out)).toBe(DENIED_TEXT);
    expect(text(out).split('\n')).toHaveLength(4);
    expect(t.ran.args).toEqual([]);
  });

  it('expiry does not run it and says so', async () => {
    const t = await setup();
    t.hooks.on('before_tool_call', () => ({ requireApproval: { ...ask.requireApproval, timeoutMs: 20 } }));
    const out = await t.call('echo', { text: 'x' });
    expect(out).toMatchObject({ status: 'blocked', deniedReason: 'approval-timeout' });
    expect(text(out).split('\n')[0]).toBe('Approval timed out');
    expect(t.ran.args).toEqual([]);
  });

  it('an explicit timeoutBehavior allow runs it on expiry', async () => {
    const t = await setup();
    t.hooks.on('before_tool_call', () => ({ requireApproval: { ...ask.requireApproval, timeoutMs: 20, timeoutBehavior: 'allow' as const } }));
    expect((await t.call('echo', { text: 'x' })).status).toBe('ok');
  });

  it('allow-always stores a grant for the same arguments; revoking it asks again', async () => {
    const t = await setup();
    t.hooks.on('before_tool_call', () => ask);
    let asked = 0;
    t.bus.on('approval.requested', () => asked++);
    const off = t.answer('allow-always');
    const first = await t.call('echo', { text: 'x' });
    expect(first.status).toBe('ok');
    off();
    const second = await t.call('echo', { text: 'x' });
    expect(second.status).toBe('ok');
    expect(second.grantId).toBe(first.approval?.grantId);
    expect(asked).toBe(1);

    // Other arguments are not covered by the grant.
    t.answer('deny');
    expect((await t.call('echo', { text: 'y' })).status).toBe('blocked');
    expect(asked).toBe(2);

    await t.approvals.revokeGrant(first.approval!.grantId!, 'cli:op');
    expect((await t.call('echo', { text: 'x' })).status).toBe('blocked');
    expect(asked).toBe(3);
  });

  it('without an approval service the call is refused', async () => {
    const t = await setup({ approvals: undefined });
    t.hooks.on('before_tool_call', () => ask);
    const out = await t.call('echo', { text: 'x' });
    expect(out).toMatchObject({ status: 'blocked', deniedReason: 'approval-unavailable' });
  });
});

describe('hook-requested approval that nobody decides within approvals.waitSec', () => {
  const NO_WAIT = (() => {
    const parsed = parseConfig({ owners: { discord: ['owner-1'] }, approvals: { waitSec: 0 } });
    if (!parsed.ok) throw parsed.error;
    return parsed.value.config;
  })();
  const ask = { requireApproval: { title: 'Echo something', description: 'A plugin wants a human to look' } };
  const deferred = { defer: true, surface: { tools: ['echo', 'big'] }, toolCallId: 'c7' } as const;

  it('answers pending without running; the call is stored with the model\'s own arguments and the surface as its ceiling', async () => {
    const t = await setup({}, NO_WAIT);
    // The hook rewrites the arguments; the stored call keeps what the model sent, so a resume runs the hook again.
    t.hooks.on('before_tool_call', ({ params }) => ({ ...ask, params: { ...params, text: `${String(params.text)}!` } }));
    const out = await t.call('echo', { text: 'x' }, deferred);
    expect(out).toMatchObject({ status: 'pending', isError: false, details: { status: 'pending' } });
    const id = (out.details as { approvalId: string }).approvalId;
    expect(text(out)).toMatch(new RegExp(`^pending approval ${id}: it runs when an approver decides; the result will be posted here\\.\nDo not call it again`));
    expect(t.ran.args).toEqual([]);
    expect(await t.approvals.get(id)).toMatchObject({ status: 'pending', kind: 'tool', via: 'agent', fullText: JSON.stringify({ text: 'x!' }, null, 2) });
    expect(await t.approvals.deferred.get(id)).toMatchObject({ state: 'deferred', tool: 'echo', args: { text: 'x' }, toolCallId: 'c7', origin: 'turn', surface: ['echo', 'big'] });
  });

  it('resumed after allow-once, it runs once with the decision, through the hook again, and asks nobody', async () => {
    const t = await setup({}, NO_WAIT);
    t.hooks.on('before_tool_call', () => ask);
    const first = await t.call('echo', { text: 'x' }, deferred);
    const id = (first.details as { approvalId: string }).approvalId;
    await t.approvals.resolve(id, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    let asked = 0;
    t.bus.on('approval.requested', () => asked++);
    const resumed = await t.call('echo', { text: 'x' }, { ...deferred, resume: { approvalId: id }, loopDetection: false });
    expect(resumed).toMatchObject({ status: 'ok', content: [{ type: 'text', text: 'echo: x' }], approval: { id, outcome: 'allow-once' } });
    expect(t.ran.args).toEqual([{ text: 'x' }]);
    expect(asked).toBe(0);
  });

  it('resumed after a deny, it stays refused; when the hook now asks about other arguments, a new card asks', async () => {
    const t = await setup({}, NO_WAIT);
    let suffix = '';
    t.hooks.on('before_tool_call', ({ params }) => ({ ...ask, params: { ...params, text: `${String(params.text)}${suffix}` } }));
    const first = await t.call('echo', { text: 'x' }, deferred);
    const id = (first.details as { approvalId: string }).approvalId;
    await t.approvals.resolve(id, 'deny', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    expect(await t.call('echo', { text: 'x' }, { ...deferred, resume: { approvalId: id } })).toMatchObject({ status: 'blocked', deniedReason: 'approval-denied' });

    const second = await t.call('echo', { text: 'y' }, deferred);
    const secondId = (second.details as { approvalId: string }).approvalId;
    await t.approvals.resolve(secondId, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    suffix = ' (changed)';
    const again = await t.call('echo', { text: 'y' }, { ...deferred, resume: { approvalId: secondId } });
    // What the approver saw is not what would run now: the old decision does not cover it.
    expect(again.status).toBe('pending');
    expect((again.details as { approvalId: string }).approvalId).not.toBe(secondId);
    expect(t.ran.args).toEqual([]);
  });

  it('without defer, or without a surface to keep as the ceiling, the call waits as before', async () => {
    const t = await setup({}, NO_WAIT);
    t.hooks.on('before_tool_call', () => ask);
    t.answer('allow-once');
    expect((await t.call('echo', { text: 'x' })).status).toBe('ok');
    expect((await t.call('echo', { text: 'x' }, { defer: true })).status).toBe('ok');
  });
});

describe('trusted policies', () => {
  it('block, rewrite params, and fail closed on a throw', async () => {
    const t = await setup({
      trustedPolicies: [
        { id: 'rewrite', description: '', evaluate: (c) => ({ params: { ...c.params, text: `[${String(c.params.text)}]` } }) },
        { id: 'no-big', description: '', matcher: ['big'], evaluate: () => ({ allow: false }) },
        { id: 'broken', description: '', matcher: ['cron'], evaluate: () => { throw new Error('x'); } },
      ],
    });
    await t.call('echo', { text: 'x' });
    expect(t.ran.args).toEqual([{ text: '[x]' }]);
    expect(text(await t.call('big', {}))).toBe('blocked by no-big');
    expect(text(await t.call('cron', {}))).toBe('blocked by broken: policy evaluation failed');
  });
});

describe('execution', () => {
  it('a thrown error becomes {status:"error", tool, error}', async () => {
    const t = await setup();
    const out = await t.call('boom', {});
    expect(out).toMatchObject({ status: 'error', isError: true, details: { status: 'error', tool: 'boom', error: 'disk on fire' } });
    expect(t.seen.map(([n]) => n)).toEqual(['tool.execution.started', 'tool.execution.error']);
  });

  it('an abort stops the wait and the tool sees its signal aborted', async () => {
    const t = await setup();
    const controller = new AbortController();
    const pending = t.call('hang', {}, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    const out = await pending;
    expect(out).toMatchObject({ status: 'error', details: { status: 'aborted', tool: 'hang' } });
    expect(t.ran.signals[0]!.aborted).toBe(true);
  });

  it('a tool past its timeout is aborted with a timeout result', async () => {
    const t = await setup({ timeoutMs: 20 });
    const out = await t.call('hang', {});
    expect(out).toMatchObject({ status: 'error', details: { status: 'timeout', timedOut: true, error: 'Tool hang timed out after 20 ms' } });
    expect(t.ran.signals[0]!.aborted).toBe(true);
  });

  it('truncates what the model reads and caps the stored details', async () => {
    const t = await setup({ maxResultChars: 4000 });
    const out = await t.call('big', {});
    expect(out.truncated).toBe(true);
    const body = text(out);
    expect(body.length).toBeLessThanOrEqual(4000);
    expect(body).toMatch(/\[\.\.\. \d+ more characters truncated; rerun with narrower args if needed\]$/);
    expect((out.details as { blob: string }).blob).toContain('[18000 more characters]');
  });
});

describe('loop detection in the chain', () => {
  it('appends the warning note at 10 identical calls and blocks at 20, never throwing', async () => {
    const t = await setup();
    const outs = [];
    for (let i = 0; i < 21; i++) outs.push(await t.call('echo', { text: 'same' }, { runId: 'run-1' }));
    expect(text(outs[9]!)).toBe('echo: same');
    expect(text(outs[10]!)).toContain('[System note: Tool-loop warning after 10 repeated calls.');
    expect(outs[20]).toMatchObject({ status: 'blocked', deniedReason: 'tool-loop', details: { detector: 'generic_repeat', count: 20 } });
    expect(t.ran.args).toHaveLength(20);
    expect(t.seen.filter(([n]) => n === 'tool.loop').map(([, p]) => (p as { action: string }).action)).toEqual(['warn', 'block']);
  });

  it('can be switched off per agent', async () => {
    const t = await setup();
    for (let i = 0; i < 25; i++) expect((await t.call('echo', { text: 'same' }, { loopDetection: false, runId: 'run-1' })).status).toBe('ok');
  });

  it('counts identical calls an approver denied: the twenty-first is not even asked', async () => {
    const t = await setup();
    let asked = 0;
    t.hooks.on('before_tool_call', () => (asked++, { requireApproval: { title: 'Echo?', description: 'echo' } }));
    t.answer('deny');
    const outs = [];
    for (let i = 0; i < 21; i++) outs.push(await t.call('echo', { text: 'same' }, { runId: 'run-1' }));
    expect(outs.slice(0, 20).map((o) => o.deniedReason)).toEqual(Array(20).fill('approval-denied'));
    expect(outs[20]).toMatchObject({ deniedReason: 'tool-loop', details: { detector: 'generic_repeat', count: 20 } });
    expect(asked).toBe(20);
    expect(t.ran.args).toEqual([]);
  });

  it('never counts a call without a run (a person’s command)', async () => {
    const t = await setup();
    for (let i = 0; i < 40; i++) expect((await t.call('echo', { text: 'same' })).content).toEqual([{ type: 'text', text: 'echo: same' }]);
    expect(t.seen.filter(([n]) => n === 'tool.loop')).toEqual([]);
  });

  it('counts each run apart, and records blocked calls until the breaker stops the run', async () => {
    const t = await setup();
    for (let i = 0; i < 19; i++) await t.call('echo', { text: 'same' }, { runId: 'run-a' });
    expect((await t.call('echo', { text: 'same' }, { runId: 'run-b' })).status).toBe('ok');
    const outs = [];
    for (let i = 0; i < 12; i++) outs.push(await t.call('echo', { text: 'same' }, { runId: 'run-a' }));
    expect(outs.map((o) => o.status)).toEqual(['ok', ...Array(11).fill('blocked')]);
    expect(outs.slice(1, 11).map((o) => (o.details as { detector: string }).detector)).toEqual(Array(10).fill('generic_repeat'));
    expect(outs[11]).toMatchObject({ deniedReason: 'tool-loop', details: { detector: 'global_circuit_breaker', count: 30 } });
    // Once tripped, the run's other calls are refused as well; they never reach the tool.
    const ran = t.ran.args.length;
    expect(await t.call('echo', { text: 'different' }, { runId: 'run-a' })).toMatchObject({ status: 'blocked', details: { detector: 'global_circuit_breaker' } });
    expect(t.ran.args).toHaveLength(ran);
    const blocks = await t.store.db.value("SELECT COUNT(*) FROM audit_events WHERE type = 'tool.blocked'");
    expect(blocks).toBe(12);
  });

  it.each([
    [{}, 'main', true],
    [{ tools: { loopDetection: { enabled: false } } }, 'main', false],
    [{ tools: { loopDetection: { enabled: false } }, agents: { list: [{ id: 'main', tools: { loopDetection: { enabled: true } } }] } }, 'main', true],
  ])('loopDetectionEnabled(%j, %s) = %s', (raw, agent, expected) => {
    const parsed = parseConfig(raw);
    if (!parsed.ok) throw parsed.error;
    expect(loopDetectionEnabled(parsed.value.config, agent)).toBe(expected);
  });
});

describe('after_tool_call and tool_result_persist', () => {
  it('after_tool_call sees the raw result; tool_result_persist rewrites what is stored and what the model reads', async () => {
    // The turn loop reloads the transcript every turn: a rewrite that the current turn did not
    // see would make the model read two different results for one call.
    const t = await setup();
    const after = new Promise<unknown>((resolve) => t.hooks.on('after_tool_call', (e) => resolve(e)));
    t.hooks.on('tool_result_persist', (e) => ({ message: { ...e.message, content: [{ type: 'text', text: 'redacted for storage' }] } }));
    const out = await t.call('echo', { text: 'secret' });
    expect(text(out)).toBe('redacted for storage');
    expect(await after).toMatchObject({ toolName: 'echo', params: { text: 'secret' }, isError: false, content: [{ type: 'text', text: 'echo: secret' }] });
    await t.invoker.settled();
    expect((await t.transcripts.list('agent:main:discord:channel:42'))[0]!.content).toEqual([{ type: 'text', text: 'redacted for storage' }]);
  });
});
