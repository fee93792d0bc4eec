// Scheduled jobs end to end through the real discord.js adapter on the loopback Discord fake:
// the owner asks in #dev and the model (a loopback OpenAI-compatible fake driven by the real
// SDK) calls the owner-only cron tool; the owner manages jobs with /cron, typed and native,
// without the model; a non-owner gets the owner gate's refusal and nothing else; and a job
// whose turn waits on an approval card does not hold back another job, even with one slot.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalAction } from '../../adapters/common/approval-card.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { unknownCommandText } from '../../src/gateway/command-text.js';
import { defaultGuild, fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import { type FakeModelServer, type FakeReply, type FakeRequest, lastUserText, toolNames } from '../fakes/models/server.js';

const GUILD = '300000000000000001';
const GENERAL = '300000000000000002';
const DEV = '300000000000000003';
const olga = fakeUser('400000000000000009', 'olga');
const alice = fakeUser('400000000000000001', 'alice');

let fake: DiscordFake;
let model: FakeModelServer;
let warden: RunningWarden;
let dir: string;


/** The fake model: schedule when asked to, confirm after the tool result, answer each job. */
function respond(r: FakeRequest): FakeReply {
  const last = r.body.messages.at(-1);
  const text = lastUserText(r);
  if (last?.role === 'tool') return { kind: 'reply', text: text.includes('touch approved.txt') ? 'Touched the file.' : 'Done: the digest is scheduled.' };
  if (text.includes('Scheduled job') && text.includes('touch approved.txt')) return { kind: 'reply', toolCalls: [{ name: 'exec', args: { command: 'touch approved.txt' } }] };
  if (text.includes('Scheduled job') && text.includes('open incidents')) return { kind: 'reply', text: 'Open incidents: none.' };
  if (text.includes('Scheduled job') && text.includes('weather')) return { kind: 'reply', text: 'Weather: sunny.' };
  if (text.includes('Scheduled job')) return { kind: 'reply', text: 'Daily digest: 3 open PRs, CI green.' };
  if (text.includes('schedule')) {
    return { kind: 'reply', toolCalls: [{ name: 'cron', args: { action: 'add', name: 'digest', message: 'post the daily digest', everyMs: 86_400_000 } }] };
  }
  return { kind: 'reply', text: 'ok' };
}

beforeAll(async () => {
  // Both are guild administrators: Discord offers the owner-only /cron in a guild to administrators only.
  fake = await startDiscordFake({ guilds: [{ ...defaultGuild, admins: [olga.id, alice.id] }] });
  model = await startFakeOpenAI({ respond });
  dir = mkdtempSync(path.join(tmpdir(), 'warden-cron-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    owners: { discord: [olga.id] },
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'coding' },
    // One slot: a job waiting on a person must still let the next job through.
    cron: { maxConcurrent: 1 },
    channels: { discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { dev: { tools: { allow: ['*'] } } } } } } },
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  warden = started.warden;
  await fake.frames.waitFor((f) => f.op === 2, 5_000, 'IDENTIFY');
});
afterAll(async () => {
  await warden?.stop();
  await fake?.close();
  await model?.close();
});

const mark = () => fake.requests.records.length;
const botPostIn = (channelId: string, text: string, from = 0) =>
  fake.requests.waitFor(
    (r) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${channelId}/messages` && String(r.body?.content ?? '').includes(text),
    10_000,
    text,
  );
/** Types a command in a channel (no mention needed for commands) and returns the bot's answer. */
async function typed(author: typeof olga, channelId: string, content: string): Promise<string> {
  const from = mark();
  fake.userMessage({ author, channelId, content });
  const reply = await fake.requests.waitFor((r) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${channelId}/messages`, 10_000, content);
  return String(reply.body.content);
}
const cardButtons = (message: APIMessage) => (message.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);

describe('cron end to end', () => {
  it('the owner schedules a job; it fires and answers in #dev as a non-owner turn', async () => {
    fake.userMessage({ author: olga, channelId: DEV, content: `<@${fake.bot.id}> please schedule a daily digest here` });
    await botPostIn(DEV, 'Done: the digest is scheduled.');
    const [job] = await warden.cron.jobs.list();
    expect(job).toMatchObject({ name: 'digest', createdBy: olga.id, target: { provider: 'discord', chat: 'channel', guildId: GUILD, channelId: DEV } });
    // The owner's turn saw the owner-only tool, and the bundled skills in its system prompt.
    expect(toolNames(model.requests[0]!)).toContain('cron');
    const system = (model.requests[0]!.body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'system')!.content;
    expect(system).toContain('<available_skills>');
    expect(system).toContain('<name>incident-triage</name>');

    // Bring the job's time forward instead of waiting a day.
    await warden.store.db.run('UPDATE cron_jobs SET next_run_at = ? WHERE id = ?', [Date.now() - 1, job!.id]);
    warden.cron.scheduler.poke();
    await botPostIn(DEV, 'Daily digest: 3 open PRs, CI green.');

    const jobTurn = model.requests.find((r) => lastUserText(r).includes('Scheduled job'))!;
    expect(toolNames(jobTurn)).not.toContain('cron');
    expect(toolNames(jobTurn)).toContain('exec');
    await expect.poll(async () => (await warden.cron.jobs.runs(job!.id))[0]?.status, { timeout: 5_000 }).toBe('ok');
    expect((await warden.cron.jobs.runs(job!.id))[0]).toMatchObject({ trigger: 'schedule', durationMs: expect.any(Number) });
  });

  it('a non-owner asking to schedule gets no cron tool at all', async () => {
    const before = model.requests.length;
    const from = mark();
    fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> please schedule something` });
    await expect.poll(() => model.requests.length, { timeout: 10_000 }).toBeGreaterThan(before);
    expect(toolNames(model.requests[before]!)).not.toContain('cron');
    // The turn goes on (the model's call of a tool it was not given fails, it answers): its post
    // comes before the next test types a command, or on a loaded machine it is taken for that
    // command's answer.
    await botPostIn(DEV, 'Done: the digest is scheduled.', from);
  });
});

describe('/cron for owners, without the model', () => {
  let id: string;

  it('add: a job from #dev that posts in #general, a channel Warden has been addressed in', async () => {
    // Warden learns #general's name and guild when it is addressed there.
    fake.userMessage({ author: olga, channelId: GENERAL, content: `<@${fake.bot.id}> hello` });
    await botPostIn(GENERAL, 'ok');
    const modelCalls = model.requests.length;
    const reply = await typed(olga, DEV, '/cron add "0 9 * * 1-5" post the open incidents in #general');
    expect(reply).toMatch(/^Scheduled "post the open incidents in #general" \(cron "0 9 \* \* 1-5"\) in #general, id (\w+); next run \d{4}-\d\d-\d\dT09:00:00\.000Z\.$/);
    id = /id (\w+);/.exec(reply)![1]!;
    expect(await warden.cron.jobs.get(id)).toMatchObject({
      message: 'post the open incidents in #general',
      createdBy: olga.id,
      missed: 'skip',
      target: { sessionKey: `agent:main:discord:channel:${GENERAL}`, chat: 'channel', guildId: GUILD, channelId: GENERAL, channelName: 'general' },
    });
    expect(model.requests.length).toBe(modelCalls);
  });

  it.each([
    ['"* * * * * *"', 'cron: "* * * * * *" runs 1 s apart'],
    ['"*/30 * * * * *"', 'cron: "*/30 * * * * *" runs 30 s apart'],
    ['"0,59 0 9 * * 1-5 UTC"', 'cron: "0,59 0 9 * * 1-5" runs 59 s apart'],
  ])('add %s: refused, as every refuses under a minute — one minimum for every form', async (spec, error) => {
    const before = (await warden.cron.jobs.list()).length;
    const reply = await typed(olga, DEV, `/cron add ${spec} spam #general`);
    expect(reply).toBe(`/cron add: ${error}; runs must be at least 60000 ms (one minute) apart`);
    expect(await warden.cron.jobs.list()).toHaveLength(before);
  });

  it('list: every job of the agent with its schedule, target and next run', async () => {
    const reply = await typed(olga, DEV, '/cron list');
    expect(reply).toMatch(/^Cron jobs \(2\):/);
    expect(reply).toContain(`• ${id} "post the open incidents in #general" — cron "0 9 * * 1-5" → #general · next `);
    // Times for people: a weekday, a date and a time in UTC, never an ISO string.
    expect(reply).toMatch(/→ #general · next \w{3} \d{1,2} \w{3} \d{4}, 09:00 UTC/);
    expect(reply).toMatch(/"digest" — every 1 d → #dev · next .* · last ok in [\d.]+ (ms|s) \(schedule, /);
  });

  it('run: fires the job now through the scheduler; its answer lands in #general and the run is recorded', async () => {
    const from = mark();
    expect(await typed(olga, DEV, `/cron run ${id}`)).toBe(`Started job ${id} ("post the open incidents in #general") now; its answer goes to #general.`);
    await botPostIn(GENERAL, 'Open incidents: none.', from);
    await expect.poll(async () => (await warden.cron.jobs.runs(id))[0]?.status, { timeout: 5_000 }).toBe('ok');
    expect((await warden.cron.jobs.runs(id))[0]).toMatchObject({ trigger: 'manual', startedAt: expect.any(Number), durationMs: expect.any(Number) });
    expect(await typed(olga, DEV, `/cron runs ${id}`)).toMatch(new RegExp(`^Runs of job ${id} \\("post the open incidents in #general"\\), newest first:\\n• ok in [\\d.]+ (ms|s) \\(manual, `));
  });

  it('pause and resume', async () => {
    expect(await typed(olga, DEV, `/cron pause ${id}`)).toBe(`Paused job ${id} ("post the open incidents in #general").`);
    expect((await warden.cron.jobs.get(id))!.enabled).toBe(false);
    expect(await typed(olga, DEV, '/cron list')).toContain(`• ${id} "post the open incidents in #general" — cron "0 9 * * 1-5" → #general · paused`);
    expect(await typed(olga, DEV, `/cron resume ${id}`)).toMatch(new RegExp(`^Resumed job ${id} \\("post the open incidents in #general"\\); next run \\w{3} \\d{1,2} \\w{3} \\d{4}, \\d\\d:\\d\\d UTC\\.$`));
    expect((await warden.cron.jobs.get(id))!.enabled).toBe(true);
  });

  it('native /cron is not offered in a guild, administrators included; the owner runs it from the bot DM', async () => {
    // Discord shows a "0"-permission command to every guild administrator: /cron is registered for the bot DM only.
    expect(() => fake.command({ name: 'cron', options: { args: 'list' }, user: olga, channelId: DEV })).toThrow(/not offered in guilds/);
    const { id: interaction, token } = fake.command({ name: 'cron', options: { args: 'list' }, user: olga, dm: true });
    const deferred = await fake.interactionCallback(interaction);
    expect(deferred.body).toEqual({ type: 5, data: { flags: 64 } });
    const answer = await fake.requests.waitFor((r) => r.method === 'PATCH' && r.path === `/webhooks/${fake.bot.id}/${token}/messages/@original`, 8_000, 'native /cron answer');
    expect(String(answer.body.content)).toMatch(/^Cron jobs \(2\):/);
  });

  it('a non-owner (a guild administrator) is told /cron is no command, for every subcommand, and learns nothing about the jobs', async () => {
    // The answer any word that names no command gets: /cron and the cron tool do not exist for a non-owner.
    const refusal = unknownCommandText('cron', [], '/help', undefined, false);
    const job = (await warden.cron.jobs.get(id))!;
    for (const command of ['/cron', '/cron list', `/cron run ${id}`, `/cron pause ${id}`, `/cron remove ${id}`, `/cron runs ${id}`, '/cron add "* * * * *" spam #general', '/cron frobnicate']) {
      // Addressed with a mention: unaddressed, /cron from a non-owner is ignored like any unknown word.
      const reply = await typed(alice, DEV, `<@${fake.bot.id}> ${command}`);
      expect(reply).toBe(refusal);
      expect(reply).not.toMatch(/owner/);
      for (const secret of [job.name, job.message, 'general', 'digest']) expect(reply).not.toContain(secret);
    }
    // Not offered to the administrator in the guild; in their own DM with the bot it is, and the owner check refuses it.
    expect(() => fake.command({ name: 'cron', options: { args: 'list' }, user: alice, channelId: DEV })).toThrow(/not offered in guilds/);
    const { token } = fake.command({ name: 'cron', options: { args: 'list' }, user: alice, dm: true });
    const native = await fake.requests.waitFor((r) => r.method === 'PATCH' && r.path === `/webhooks/${fake.bot.id}/${token}/messages/@original`, 8_000, 'native refusal');
    expect(native.body.content).toBe(refusal);
    expect(await warden.cron.jobs.get(id)).toMatchObject({ enabled: true, runCount: job.runCount });
    expect(await warden.cron.jobs.list()).toHaveLength(2);
  });

  it('remove', async () => {
    expect(await typed(olga, DEV, `/cron remove ${id}`)).toBe(`Removed job ${id} ("post the open incidents in #general").`);
    expect(await warden.cron.jobs.get(id)).toBeUndefined();
    expect(await typed(olga, DEV, '/cron list')).toMatch(/^Cron jobs \(1\):\n• \w+ "digest"/);
  });
});

describe('a job waiting for an approval', () => {
  it('does not hold back another job, even with a single slot; decided, it finishes', async () => {
    const needs = (await typed(olga, DEV, '/cron add "every 1d" touch approved.txt')).match(/id (\w+);/)![1]!;
    const other = (await typed(olga, GENERAL, '/cron add "every 1d" post the weather')).match(/id (\w+);/)![1]!;
    const from = mark();
    // Both fall due at once; the approval job is first in line for the one slot.
    await warden.store.db.run('UPDATE cron_jobs SET next_run_at = ? WHERE id = ?', [Date.now() - 2, needs]);
    await warden.store.db.run('UPDATE cron_jobs SET next_run_at = ? WHERE id = ?', [Date.now() - 1, other]);
    warden.cron.scheduler.poke();

    await fake.requests.waitFor((r) => fake.requests.records.indexOf(r) >= from && r.path === `/channels/${DEV}/messages` && Array.isArray(r.body?.components) && r.body.components.length > 0, 10_000, 'approval card');
    // While the card waits in #dev, the other job runs and answers in #general.
    await botPostIn(GENERAL, 'Weather: sunny.', from);
    expect(warden.cron.scheduler.state(needs)).toBe('parked');
    expect(await warden.approvals.list()).toHaveLength(1);
    expect(await typed(olga, DEV, '/cron list')).toContain('"touch approved.txt" — every 1 d → #dev · waiting for an approval');

    const card = fake.botMessagesIn(DEV).filter((m) => cardButtons(m).length > 0).at(-1)!;
    const allow = cardButtons(card).find((c) => decodeApprovalAction(c)?.decision === 'allow-once')!;
    fake.click({ message: card, customId: allow, user: olga });
    await botPostIn(DEV, 'Touched the file.', from);
    await expect.poll(async () => (await warden.cron.jobs.runs(needs))[0]?.status, { timeout: 5_000 }).toBe('ok');
    expect((await warden.cron.jobs.runs(other))[0]).toMatchObject({ status: 'ok' });
  });
});
