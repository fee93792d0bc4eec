import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionContextStore } from '../../src/turn/session-contexts.js';
import { parseConfig, type WardenConfig } from '../../src/config/index.js';
import { CronJobs } from '../../src/cron/jobs.js';
import { CronScheduler } from '../../src/cron/scheduler.js';
import { unknownCommandText } from '../../src/gateway/command-text.js';
import { isCommand, parseCommand, runCommand, type CommandDeps } from '../../src/gateway/commands.js';
import { routeMessage, type Route } from '../../src/gateway/router.js';
import { toolReportFor } from '../../src/app/startup.js';
import { GovernedToolExecutor } from '../../src/app/tool-executor.js';
import { conversationOf } from '../../src/turn/turn-context.js';
import type { InboundMessage } from '../../src/gateway/types.js';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/index.js';

/**
 * `/cron` is the owner-only cron tool in chat form. A member of the team tries to list, add,
 * run, pause, resume, remove and read jobs by every spelling and path they have — typed, with
 * an owner's id from another platform, on the web chat as someone other than its local user,
 * and through the tool call itself with a surface that lists cron — and gets the answer a word
 * that names nothing gets, word for word (the command is unknown to them, the tool too),
 * learning nothing about the jobs, nor that cron exists. An owner cannot aim a job at a
 * conversation Warden was never addressed in, at another guild's channel by name, or at a key
 * spelled to forge a session; and where cron is denied, `/cron` does not run either.
 */

let dir: string;
let store: Store;
let config: WardenConfig;
let jobs: CronJobs;
let executor: GovernedToolExecutor;
let contexts: SessionContextStore;
const delivered: string[] = [];

const OWNER = '900';
const MEMBER = '555';
const G1 = '111';
const DEV = '502';
const GENERAL = '501';

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'warden-cron-gate-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    dataDir: path.join(dir, 'data'),
    owners: { discord: [OWNER], slack: ['U1'] },
    tools: { profile: 'coding' },
    channels: { discord: { guilds: { [G1]: { channels: { locked: { tools: { deny: ['cron'] } } } } } } },
  });
  if (!parsed.ok) throw parsed.error;
  config = parsed.value.config;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  store = opened.store;
  jobs = new CronJobs(store.db);
  contexts = new SessionContextStore(store.db);
  delivered.length = 0;
  const scheduler = new CronScheduler({ jobs, log: pino({ level: 'silent' }), deliver: async (job) => (delivered.push(job.id), { ok: true }) });
  executor = new GovernedToolExecutor(config, { config, baseDir: dir, store, cron: { jobs, scheduler } }, {});
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function inbound(senderId: string, over: Partial<InboundMessage> = {}): InboundMessage {
  return { provider: 'discord', chatType: 'channel', guildId: G1, channelId: DEV, channelName: 'dev', senderId, text: 'hello', mentionsBot: true, messageId: 'm', receivedAt: 0, ...over };
}

/** What the router does with a message: route it and record its conversation. */
async function routed(message: InboundMessage): Promise<Route> {
  const decision = routeMessage(config, message, { isCommand });
  if (decision.kind !== 'route') throw new Error(`not routed: ${decision.reason}`);
  await contexts.record(decision.route.sessionKey, decision.route.agentId, conversationOf(decision.route.context), message.senderId);
  return decision.route;
}

const deps = (): CommandDeps => ({
  toolReport: toolReportFor(config, executor.inputs),
  tools: executor,
  approve: async () => ({ kind: 'not-found' }),
  skills: () => undefined,
  status: () => ({ model: undefined, running: false, queued: 0, pendingApprovals: 0, adapters: [], uptimeMs: 0 }),
  stop: () => false,
  newCallId: () => `cmd-${Math.random()}`,
});

async function say(text: string, message: InboundMessage): Promise<string> {
  const route = await routed({ ...message, text });
  const command = parseCommand(route.text);
  if (!command) throw new Error(`not a command: ${text}`);
  return (await runCommand(command, route, deps(), new AbortController().signal)).text;
}

async function ownerJob(): Promise<string> {
  const reply = await say('/cron add "0 9 * * 1-5" post the secret-project digest', inbound(OWNER));
  const id = /id (\w+);/.exec(reply)?.[1];
  if (!id) throw new Error(reply);
  return id;
}

describe('/cron is unknown to a non-owner', () => {
  const SUBCOMMANDS = (id: string) => [
    '/cron',
    '/cron list',
    `/cron run ${id}`,
    `/cron pause ${id}`,
    `/cron resume ${id}`,
    `/cron remove ${id}`,
    `/cron runs ${id}`,
    '/cron add "* * * * *" spam everyone',
    `/cron RUN ${id}`,
    '/warden cron list',
    '/cron nonsense that would print the usage',
  ];

  it.each([
    ['a member of the guild', inbound(MEMBER)],
    ['a member in a DM', inbound(MEMBER, { chatType: 'dm', guildId: undefined, channelId: 'D1', channelName: undefined })],
    ['a Slack owner’s id used on Discord', inbound('U1')],
    ['someone on the web chat who is not its local user', inbound('intruder', { provider: 'web', chatType: 'dm', guildId: undefined, channelId: 'web', channelName: undefined })],
  ])('%s', async (_who, message) => {
    const id = await ownerJob();
    const refusal = unknownCommandText('cron', [], '/help', undefined, false);
    for (const command of SUBCOMMANDS(id)) {
      const answer = await say(command, message);
      expect(answer, command).toBe(refusal);
      for (const secret of [id, 'secret-project', '0 9 * * 1-5', 'usage', 'owner']) expect(answer).not.toContain(secret);
    }
    expect(await jobs.list()).toHaveLength(1);
    expect(await jobs.get(id)).toMatchObject({ enabled: true, runCount: 0 });
    expect(delivered).toEqual([]);
  });

  it('the tool itself, called for a non-owner with a surface that lists cron, answers as for a tool that does not exist', async () => {
    const id = await ownerJob();
    const route = await routed(inbound(MEMBER));
    const scope = { sessionKey: route.sessionKey, turn: route.context, signal: new AbortController().signal, surface: ['cron'] };
    for (const args of [{ action: 'list' }, { action: 'run', id }, { action: 'remove', id }, { action: 'update', id, message: 'pwned' }]) {
      const result = await executor.execute({ toolCallId: 'c', tool: 'cron', args }, scope);
      const none = await executor.execute({ toolCallId: 'c', tool: 'crom', args }, scope);
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toBe(JSON.stringify(none.content).replaceAll('crom', 'cron'));
      expect(JSON.stringify(result.content)).not.toMatch(/owner/);
    }
    expect(await jobs.get(id)).toMatchObject({ message: 'post the secret-project digest', runCount: 0 });
  });

  it('a job’s own turn is not an owner, so it cannot manage jobs either', async () => {
    const id = await ownerJob();
    expect(await say('/cron list', inbound(`cron:${id}`))).toBe(unknownCommandText('cron', [], '/help', undefined, false));
  });
});

describe('/cron for an owner keeps to the policy and the known conversations', () => {
  it('is not available where the channel policy denies cron, and runs nothing there', async () => {
    const answer = await say('/cron add "0 9 * * *" hello', inbound(OWNER, { channelId: '509', channelName: 'locked' }));
    expect(answer).toBe(`cron is not available here: removed by channels.discord.guilds.${G1}.channels.locked.tools.deny.`);
    expect(await jobs.list()).toEqual([]);
  });

  it.each([
    ['a channel Warden was never addressed in', '/cron add "0 9 * * *" report in <#777>', /<#777> is not a discord channel Warden has been addressed in/],
    ['a channel of another guild, by name', '/cron add "0 9 * * *" report in #ops', /#ops is not a discord channel Warden has been addressed in/],
    ['a thread-only session spelled as a channel id', '/cron add "0 9 * * *" report in <#503>', /is not a discord channel/],
    ['two channels at once', `/cron add "0 9 * * *" report in #general and <#${DEV}>`, /names 2 channels/],
  ])('refuses %s', async (_label, command, error) => {
    await routed(inbound(MEMBER, { channelId: GENERAL, channelName: 'general' }));
    await routed(inbound(MEMBER, { guildId: '222', channelId: '601', channelName: 'ops' }));
    await routed(inbound(MEMBER, { chatType: 'thread', channelId: '503', channelName: 'threads', threadId: 't1' }));
    expect(await say(command, inbound(OWNER))).toMatch(error);
    expect(await jobs.list()).toEqual([]);
  });

  it('aims a job at a channel Warden was addressed in, under that channel’s recorded name and guild', async () => {
    await routed(inbound(MEMBER, { channelId: GENERAL, channelName: 'general' }));
    const reply = await say('/cron add "every 1h" summarise #general', inbound(OWNER));
    expect(reply).toMatch(/^Scheduled "summarise #general" \(every 1 h\) in #general, id \w+;/);
    expect((await jobs.list())[0]!.target).toEqual({ sessionKey: `agent:main:discord:channel:${GENERAL}`, provider: 'discord', chat: 'channel', guildId: G1, guildName: undefined, channelId: GENERAL, channelName: 'general' });
  });

  it('an owner’s run goes through the scheduler', async () => {
    const id = await ownerJob();
    expect(await say(`/cron run ${id}`, inbound(OWNER))).toBe(`Started job ${id} ("post the secret-project digest") now; its answer goes to #dev.`);
    await expect.poll(() => delivered).toEqual([id]);
  });
});
