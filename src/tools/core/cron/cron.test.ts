import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CronJobs } from '../../../cron/jobs.js';
import { CRON_MIGRATIONS } from '../../../cron/migrations.js';
import { SessionContextStore, sessionContextsMigration } from '../../../turn/session-contexts.js';
import { parseConfig } from '../../../config/index.js';
import { ownerOnlyRefusal } from '../../invoke/owner-guard.js';
import { CronScheduler } from '../../../cron/scheduler.js';
import type { Db } from '../../../store/db.js';
import { applyMigrations } from '../../../store/migrations.js';
import { memoryDb } from '../../../store/store.js';
import type { TurnContext } from '../../../policy/context.js';
import type { ToolCallContext, ToolResult } from '../../types.js';
import { createCronTool, type CronArgs } from './cron.js';

const NOW = Date.parse('2026-11-30T10:00:00Z');

async function setup(withScheduler = true, shared: { db?: Db; jobs?: CronJobs; conversations?: SessionContextStore } = {}) {
  const db = shared.db ?? memoryDb();
  await applyMigrations(db, CRON_MIGRATIONS);
  const jobs = shared.jobs ?? new CronJobs(db);
  const delivered: string[] = [];
  const scheduler = withScheduler
    ? new CronScheduler({ jobs, now: () => NOW, log: pino({ level: 'silent' }), deliver: async (j) => (delivered.push(j.message), { ok: true }) })
    : undefined;
  const parsed = parseConfig({ owners: { discord: ['42'] } });
  if (!parsed.ok) throw parsed.error;
  const tool = createCronTool({ jobs, scheduler, now: () => NOW, config: parsed.value.config, conversations: shared.conversations });
  const call = (args: CronArgs, turn: Partial<TurnContext> = {}) =>
    tool.execute(args, {
      sessionKey: 'agent:main:discord:direct:42',
      turn: { agentId: 'main', provider: 'discord', chat: 'dm', senderId: '42', senderIsOwner: true, spawnDepth: 0, ...turn },
    } as ToolCallContext) as Promise<ToolResult>;
  return { db, jobs, call, delivered };
}
const textOf = (r: ToolResult) => (r.content[0] as { text: string }).text;

describe('the cron tool', () => {
  it('refuses a non-owner whatever the path', async () => {
    const { call, jobs } = await setup();
    const result = await call({ action: 'add', message: 'hi', everyMs: 60_000 }, { senderIsOwner: false, senderId: '7' });
    expect(result.isError).toBe(true);
    // The same refusal as the call chain's owner gate.
    expect(textOf(result)).toBe(ownerOnlyRefusal('cron', { provider: 'discord', senderId: '7', senderIsOwner: false }));
    expect(await jobs.list()).toEqual([]);
  });

  it('schedules a job that answers in the DM it was created in', async () => {
    const { call, jobs } = await setup();
    const result = await call({ action: 'add', name: 'standup', message: 'Summarise open PRs', cron: '0 9 * * 1-5', tz: 'Europe/Paris' });
    expect(textOf(result)).toMatch(/Scheduled "standup" \(cron "0 9 \* \* 1-5" \(Europe\/Paris\)\) in DM with <@42>, id \w+; next run 2026-12-01T08:00:00.000Z\./);
    expect((await jobs.list())[0]!.target).toMatchObject({ sessionKey: 'agent:main:discord:direct:42', provider: 'discord', chat: 'dm', dmUserId: '42' });
  });

  it('answers in the channel and thread for a channel job', async () => {
    const { call, jobs } = await setup();
    await call({ action: 'add', message: 'm', everyMs: 3_600_000 }, { chat: 'thread', guildId: 'G1', channelId: 'C1', channelName: 'general', threadId: 'T1' });
    expect((await jobs.list())[0]!.target).toMatchObject({ provider: 'discord', chat: 'thread', guildId: 'G1', channelId: 'C1', channelName: 'general', threadId: 'T1' });
  });

  it.each([
    [{ action: 'add', message: 'm', cron: 'not cron' }, /^cron:/],
    [{ action: 'add', message: 'm' }, /give exactly one of cron, everyMs or at/],
    [{ action: 'add', cron: '* * * * *' }, /message is required for add/],
    [{ action: 'remove' }, /id is required for remove/],
    [{ action: 'run', id: 'nope' }, /no cron job "nope" for agent main/],
  ] as Array<[CronArgs, RegExp]>)('explains a bad call %o', async (args, message) => {
    const result = await (await setup()).call(args);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(message);
  });

  it('lists, pauses, runs, shows runs and removes jobs of its own agent only', async () => {
    const { call, delivered } = await setup();
    const added = (await call({ action: 'add', name: 'n', message: 'ping', everyMs: 60_000 })).details as { id: string };
    expect((await call({ action: 'list' }, { agentId: 'other' })).details).toEqual({ jobs: [] });
    expect(textOf(await call({ action: 'update', id: added.id, enabled: false }))).toBe(`Job ${added.id} updated (enabled): every 1 min in DM with <@42>, paused.`);
    await call({ action: 'run', id: added.id });
    await expect.poll(() => delivered).toEqual(['ping']);
    await expect.poll(async () => ((await call({ action: 'runs', id: added.id })).details as { runs: unknown[] }).runs).toHaveLength(1);
    expect((await call({ action: 'remove', id: added.id }, { agentId: 'other' })).isError).toBe(true);
    expect(textOf(await call({ action: 'remove', id: added.id }))).toContain('Removed job');
    expect((await call({ action: 'status' })).details).toMatchObject({ jobs: 0 });
  });

  it('update changes schedule, message and target, and refuses a target Warden does not know', async () => {
    const { call, jobs, db } = await setup();
    await applyMigrations(db, [sessionContextsMigration]);
    const contexts = new SessionContextStore(db);
    await contexts.record('agent:main:discord:channel:c7', 'main', { provider: 'discord', chat: 'channel', guildId: 'G1', channelId: 'c7', channelName: 'ops' }, '42');
    const added = (await call({ action: 'add', name: 'n', message: 'ping', everyMs: 60_000 })).details as { id: string };
    const withTargets = await setup(true, { db, jobs, conversations: contexts });
    const updated = await withTargets.call({ action: 'update', id: added.id, cron: '0 9 * * 1-5', tz: 'Europe/Paris', message: 'post the incidents', target: '#ops' }, { guildId: 'G1' });
    expect(textOf(updated)).toBe(`Job ${added.id} updated (message, schedule, target): cron "0 9 * * 1-5" (Europe/Paris) in #ops, enabled, next run 2026-12-01T08:00:00.000Z.`);
    expect(await jobs.get(added.id)).toMatchObject({ message: 'post the incidents', schedule: { kind: 'cron', expr: '0 9 * * 1-5', tz: 'Europe/Paris' }, target: { sessionKey: 'agent:main:discord:channel:c7', channelName: 'ops', guildId: 'G1' } });
    const refused = await withTargets.call({ action: 'update', id: added.id, target: '#nowhere' }, { guildId: 'G1' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/#nowhere is not a discord channel Warden has been addressed in/);
    expect(textOf(await withTargets.call({ action: 'update', id: added.id }))).toMatch(/update needs one of/);
    expect(textOf(await withTargets.call({ action: 'update', id: added.id, tz: 'UTC' }))).toBe('tz: only applies with cron');
  });

  it('stores jobs but cannot run them without a scheduler', async () => {
    const { call } = await setup(false);
    const added = (await call({ action: 'add', message: 'ping', everyMs: 60_000 })).details as { id: string };
    expect(textOf(await call({ action: 'run', id: added.id }))).toContain('cron jobs run only inside `warden start`');
  });
});
