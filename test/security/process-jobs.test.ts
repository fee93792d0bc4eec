import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import { parseConfig, type WardenConfig } from '../../src/config/index.js';
import type { CronJob } from '../../src/cron/jobs.js';
import { EventBus } from '../../src/events/events.js';
import { processRegistry } from '../../src/exec/process-registry.js';
import { runCommand } from '../../src/gateway/commands.js';
import type { Route } from '../../src/gateway/router.js';
import { routeForCronJob } from '../../src/gateway/scheduled.js';
import { toolReportFor } from '../../src/app/startup.js';
import { contextForSessionMessage, conversationOf } from '../../src/turn/turn-context.js';
import { surfaceInputs } from '../../src/app/surface-inputs.js';
import { GovernedToolExecutor } from '../../src/app/tool-executor.js';
import type { TurnContext } from '../../src/policy/context.js';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/index.js';
import type { ToolResult } from '../../src/tools/types.js';

/**
 * Background jobs belong to the sender who started them. In a shared channel session, Bob —
 * a non-owner with `process` on his surface, and the approver who clicked Allow on Ann's shell —
 * tries every process action on Ann's job, before and after it ends, from the channel, a cron
 * turn, a subagent and a message another session sent. Every try is refused and Ann's shell
 * never sees his input; Ann and an owner keep control. And where exec is denied, process is
 * gone with it, so there is nothing to try.
 */

const CHANNEL = 'agent:main:discord:channel:c-dev';
let dir: string;
let store: Store;
let approvals: ApprovalService;
let config: WardenConfig;
let executor: GovernedToolExecutor;
/** Who clicks on the next approval card. */
let clicker: string;

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'warden-process-jobs-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    dataDir: path.join(dir, 'data'),
    owners: { discord: ['root'] },
    approvals: { approvers: { discord: ['bob', 'root'] } },
    tools: { profile: 'coding', exec: { host: 'gateway', security: 'allowlist', ask: 'on-miss', backgroundMs: 10 } },
    channels: { discord: { guilds: { G1: { channels: { general: { tools: { deny: ['exec'] } } } } } } },
  });
  if (!parsed.ok) throw parsed.error;
  config = parsed.value.config;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  store = opened.store;
  const events = new EventBus();
  approvals = new ApprovalService({ store, config, events, pollMs: 20 });
  clicker = 'bob';
  approvals.registerRenderer({
    provider: 'discord',
    show: async (request) => {
      setTimeout(() => void approvals.resolve(request.id, 'allow-once', { provider: 'discord', userId: clicker, via: { kind: 'typed' } }), 10);
    },
    update: async () => {},
  });
  executor = new GovernedToolExecutor(config, { config, baseDir: dir, store }, { approvals, events });
});

afterEach(async () => {
  // The registry is process-wide: forget this test's jobs (an owner of each session may).
  for (const sessionKey of [CHANNEL, 'agent:main:subagent:r1']) {
    const owner = { sessionKey, provider: 'discord', senderId: 'root', isOwner: true };
    for (const r of processRegistry.list(owner)) processRegistry.remove(owner, r.job.id);
  }
  for (const job of processRegistry.running()) job.killNow();
  approvals.shutdown();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const member = (senderId: string, over: Partial<TurnContext> = {}): TurnContext => ({
  agentId: 'main',
  provider: 'discord',
  chat: 'channel',
  guildId: 'G1',
  channelId: 'c-dev',
  channelName: 'dev',
  senderId,
  senderIsOwner: senderId === 'root',
  spawnDepth: 0,
  ...over,
});

const textOf = (r: ToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

/** One call through the governed path, with the surface the policy gives this turn. */
async function call(turn: TurnContext, tool: string, args: Record<string, unknown>, sessionKey = CHANNEL): Promise<ToolResult> {
  const surface = await executor.surface(turn);
  if (!surface.ok) throw new Error(surface.message);
  return executor.execute({ toolCallId: `c-${Math.random()}`, tool, args }, { sessionKey, turn, signal: new AbortController().signal, surface: surface.tools.map((t) => t.id) });
}

/** Ann starts a shell in the background; it needs approval, and Bob is the one who clicks Allow. */
async function annShell(): Promise<string> {
  const started = await call(member('ann'), 'exec', { command: 'sh', background: true });
  const id = (started.details as { sessionId?: string } | undefined)?.sessionId;
  if (!id) throw new Error(`no background job: ${textOf(started)}`);
  return id;
}

const NOT_YOURS = /^Session [0-9a-f]+ was started by another sender in this conversation; only that sender or an owner can use it\. Do not retry\.$/;
const marker = () => path.join(dir, 'workspace', 'pwned');
const ATTEMPTS: Array<[string, Record<string, unknown>]> = [
  ['poll', { action: 'poll' }],
  ['log', { action: 'log' }],
  ['write', { action: 'write', data: 'touch pwned\n' }],
  ['write with eof', { action: 'write', data: 'touch pwned\n', eof: true }],
  ['send-keys', { action: 'send-keys', literal: 'touch pwned', keys: ['enter'] }],
  ['submit', { action: 'submit' }],
  ['paste', { action: 'paste', text: 'touch pwned\n', bracketed: false }],
  ['kill', { action: 'kill' }],
  ['clear', { action: 'clear' }],
  ['remove', { action: 'remove' }],
];

describe("another sender in the same channel session cannot reach Ann's approved shell", () => {
  it.each(ATTEMPTS)('bob: process %s is refused while it runs', async (_name, args) => {
    const id = await annShell();
    const out = await call(member('bob'), 'process', { ...args, sessionId: id });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(NOT_YOURS);
    // The shell is still Ann's and still running; it never ran Bob's input.
    const poll = await call(member('ann'), 'process', { action: 'write', sessionId: id, data: 'echo still-ann\n' });
    expect(poll.isError).toBeFalsy();
    await call(member('ann'), 'process', { action: 'write', sessionId: id, eof: true });
    expect(textOf(await call(member('ann'), 'process', { action: 'poll', sessionId: id, timeout: 5000 }))).toMatch(/still-ann[\s\S]*Process exited \(exit code 0\)/);
    expect(existsSync(marker())).toBe(false);
  });

  it.each(ATTEMPTS)('bob: process %s is refused after it exited', async (_name, args) => {
    const id = await annShell();
    await call(member('ann'), 'process', { action: 'write', sessionId: id, data: 'echo secret-output\n', eof: true });
    await call(member('ann'), 'process', { action: 'poll', sessionId: id, timeout: 5000 });
    const out = await call(member('bob'), 'process', { ...args, sessionId: id });
    expect(textOf(out)).toMatch(NOT_YOURS);
    expect(textOf(out)).not.toContain('secret-output');
    expect(textOf(await call(member('ann'), 'process', { action: 'log', sessionId: id }))).toContain('secret-output');
  });

  it("bob's list shows only his own jobs; Ann's shows hers; an owner's shows both, with who started them", async () => {
    const annId = await annShell();
    clicker = 'root';
    const bobStarted = await call(member('bob'), 'exec', { command: 'sh', background: true });
    const bobId = (bobStarted.details as { sessionId: string }).sessionId;
    const listed = async (who: string) => ((await call(member(who), 'process', { action: 'list' })).details as { sessions: { id: string; startedBy?: string }[] }).sessions;
    expect((await listed('bob')).map((s) => s.id)).toEqual([bobId]);
    expect((await listed('ann')).map((s) => s.id)).toEqual([annId]);
    expect(await listed('root')).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: annId, startedBy: 'discord:ann' }), expect.objectContaining({ id: bobId, startedBy: 'discord:bob' })]),
    );
    expect(textOf(await call(member('carol'), 'process', { action: 'list' }))).toBe('No background sessions.');
  });

  it("an owner may poll and kill anyone's job in the session", async () => {
    const id = await annShell();
    expect(textOf(await call(member('root'), 'process', { action: 'poll', sessionId: id }))).toMatch(/Process still running\.$/);
    expect(textOf(await call(member('root'), 'process', { action: 'kill', sessionId: id }))).toBe(`Killed session ${id}.`);
  });

  it('the same sender id on another platform is someone else', async () => {
    const id = await annShell();
    const slackAnn = { ...member('ann'), provider: 'slack' };
    expect(textOf(await call(slackAnn, 'process', { action: 'write', sessionId: id, data: 'touch pwned\n' }))).toMatch(NOT_YOURS);
  });
});

describe('/exec: the job is the sender\'s who typed it', () => {
  const route = (senderId: string): Route => ({
    agentId: 'main',
    sessionKey: CHANNEL,
    context: member(senderId),
    replyTo: { provider: 'discord', channelId: 'c-dev' },
    text: '',
  });
  const deps = () => ({
    toolReport: toolReportFor(config, surfaceInputs(config, dir)),
    tools: executor,
    approve: async () => ({ kind: 'not-found' as const, id: '' }),
    skills: () => undefined,
    status: () => ({ model: undefined, running: false, queued: 0, pendingApprovals: 0, adapters: [], uptimeMs: 0 }),
    stop: () => false,
    newCallId: () => `cmd-${Math.random()}`,
  });

  it("Ann's /exec sh, approved by Bob, stays out of Bob's reach", async () => {
    const out = await runCommand({ name: 'exec', args: 'sh' }, route('ann'), deps() as never, new AbortController().signal);
    const id = /session ([0-9a-f]+)/.exec(out.text)?.[1];
    expect(id, out.text).toBeDefined();
    for (const [, args] of ATTEMPTS) expect(textOf(await call(member('bob'), 'process', { ...args, sessionId: id }))).toMatch(NOT_YOURS);
    expect(textOf(await call(member('ann'), 'process', { action: 'poll', sessionId: id }))).toMatch(/Process still running\.$/);
    expect(existsSync(marker())).toBe(false);
  });
});

describe('turns that act for someone else reach only their own jobs', () => {
  const job: CronJob = {
    id: 'j1',
    agentId: 'main',
    name: 'nightly',
    schedule: { kind: 'every', everyMs: 3_600_000 },
    message: 'check the shell',
    target: { sessionKey: CHANNEL, provider: 'discord', chat: 'channel', guildId: 'G1', channelId: 'c-dev', channelName: 'dev' },
    createdBy: 'ann',
    createdAt: 0,
    enabled: true,
    nextRunAt: undefined,
    lastRunAt: undefined,
    lastStatus: undefined,
    lastError: undefined,
    runCount: 0,
  } as CronJob;

  it("a cron turn in the channel, even one Ann created, cannot reach Ann's job", async () => {
    const id = await annShell();
    const cron = routeForCronJob(config, job);
    expect(cron.sessionKey).toBe(CHANNEL);
    expect(textOf(await call(cron.context, 'process', { action: 'list' }))).toBe('No background sessions.');
    for (const [, args] of ATTEMPTS) expect(textOf(await call(cron.context, 'process', { ...args, sessionId: id }))).toMatch(NOT_YOURS);
  });

  it("a subagent acting for Bob sees nothing of the channel's jobs, and keeps its own", async () => {
    const annId = await annShell();
    const child = { ...member('bob'), spawnDepth: 1 };
    const childKey = 'agent:main:subagent:r1';
    expect(textOf(await call(child, 'process', { action: 'write', sessionId: annId, data: 'touch pwned\n' }, childKey))).toBe(`No session found for ${annId}`);
    clicker = 'root';
    const own = await call(child, 'exec', { command: 'sh', background: true }, childKey);
    const ownId = (own.details as { sessionId: string }).sessionId;
    expect(textOf(await call(child, 'process', { action: 'poll', sessionId: ownId }, childKey))).toMatch(/Process still running\.$/);
    // Bob himself, in the channel, does not reach what his subagent started in its own session either.
    expect(textOf(await call(member('bob'), 'process', { action: 'poll', sessionId: ownId }))).toBe(`No session found for ${ownId}`);
  });

  it("a message Bob sent into the channel from another session acts for Bob and reaches none of Ann's jobs", async () => {
    const id = await annShell();
    const bobElsewhere = member('bob', { channelId: 'c-other', channelName: 'other' });
    const sent = contextForSessionMessage(config, { agentId: 'main', conversation: conversationOf(member('ann')) }, bobElsewhere, { deny: [] });
    expect(sent.senderId).toBe('bob');
    expect(sent.senderIsOwner).toBe(false);
    expect(textOf(await call(sent, 'process', { action: 'list' }))).toBe('No background sessions.');
    expect(textOf(await call(sent, 'process', { action: 'write', sessionId: id, data: 'touch pwned\n' }))).toMatch(NOT_YOURS);
  });

  it('a job in another session does not exist for the channel', async () => {
    const id = await annShell();
    expect(textOf(await call(member('ann'), 'process', { action: 'poll', sessionId: id }, 'agent:main:discord:direct:ann'))).toBe(`No session found for ${id}`);
  });
});

describe('where exec is denied, process is gone with it', () => {
  it('bob in #general (deny: [exec]) cannot call process at all, and is told which key removed it', async () => {
    const id = await annShell();
    const general = member('bob', { channelId: 'c-gen', channelName: 'general' });
    const surface = await executor.surface(general);
    expect(surface.ok && surface.tools.map((t) => t.id)).not.toContain('process');
    expect(toolReportFor(config, surfaceInputs(config, dir))(general).removed).toContainEqual({ tool: 'process', by: 'channels.discord.guilds.G1.channels.general.tools.deny' });
    const out = await call(general, 'process', { action: 'write', sessionId: id, data: 'touch pwned\n' });
    expect(out.isError).toBe(true);
    expect((JSON.parse(textOf(out)) as { error: string }).error).toMatch(/^Unknown tool "process"\. Available tools: (?!.*\bexec\b)/);
    expect(existsSync(marker())).toBe(false);
  });

  it('/exec in #general is refused naming the deny key', async () => {
    const general = member('bob', { channelId: 'c-gen', channelName: 'general' });
    const route: Route = { agentId: 'main', sessionKey: 'agent:main:discord:channel:c-gen', context: general, replyTo: { provider: 'discord', channelId: 'c-gen' }, text: '' };
    const deps = { toolReport: toolReportFor(config, surfaceInputs(config, dir)), tools: executor } as unknown as Parameters<typeof runCommand>[2];
    const out = await runCommand({ name: 'exec', args: 'sh' }, route, deps, new AbortController().signal);
    expect(out.text).toBe('exec is not available here: removed by channels.discord.guilds.G1.channels.general.tools.deny.');
  });
});
