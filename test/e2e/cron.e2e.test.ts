// A scheduled job end to end: the owner asks in #dev, the model (a loopback OpenAI-compatible
// fake driven by the real SDK) calls the owner-only cron tool, the job fires and its answer is
// posted in #dev through the real discord.js adapter — as a non-owner turn under #dev's policy.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/gateway/startup.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';

const GUILD = '300000000000000001';
const DEV = '300000000000000003';
const olga = fakeUser('400000000000000009', 'olga');
const alice = fakeUser('400000000000000001', 'alice');

let fake: DiscordFake;
let model: FakeModelServer;
let warden: RunningWarden;

const lastUserText = (r: FakeRequest): string => {
  const users = (r.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user');
  const content = users.at(-1)?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
};
const toolNames = (r: FakeRequest): string[] => ((r.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);

/** The fake model: schedule when asked to, confirm after the tool result, answer the job. */
function respond(r: FakeRequest): FakeReply {
  const last = r.body.messages.at(-1);
  if (last?.role === 'tool') return { kind: 'reply', text: 'Done: the digest is scheduled.' };
  const text = lastUserText(r);
  if (text.includes('Scheduled job')) return { kind: 'reply', text: 'Daily digest: 3 open PRs, CI green.' };
  if (text.includes('schedule')) {
    return { kind: 'reply', toolCalls: [{ name: 'cron', args: { action: 'add', name: 'digest', message: 'post the daily digest', everyMs: 86_400_000 } }] };
  }
  return { kind: 'reply', text: 'ok' };
}

beforeAll(async () => {
  fake = await startDiscordFake();
  model = await startFakeOpenAI({ respond });
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-cron-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    owners: { discord: [olga.id] },
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'coding' },
    channels: { discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, guilds: { [GUILD]: { channels: { dev: { tools: { allow: ['*'] } } } } } } },
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

const botPostIn = (channelId: string, text: string) =>
  fake.requests.waitFor((r) => r.method === 'POST' && r.path === `/channels/${channelId}/messages` && String(r.body?.content ?? '').includes(text), 10_000, text);

describe('cron end to end', () => {
  it('the owner schedules a job; it fires and answers in #dev as a non-owner turn', async () => {
    fake.userMessage({ author: olga, channelId: DEV, content: `<@${fake.bot.id}> please schedule a daily digest here` });
    await botPostIn(DEV, 'Done: the digest is scheduled.');
    const [job] = warden.cron.jobs.list();
    expect(job).toMatchObject({ name: 'digest', createdBy: olga.id, target: { provider: 'discord', chat: 'channel', guildId: GUILD, channelId: DEV } });
    // The owner's turn saw the owner-only tool, and the bundled skills in its system prompt.
    expect(toolNames(model.requests[0]!)).toContain('cron');
    const system = (model.requests[0]!.body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'system')!.content;
    expect(system).toContain('<available_skills>');
    expect(system).toContain('<name>incident-triage</name>');

    // Bring the job's time forward instead of waiting a day.
    warden.store.db.prepare('UPDATE cron_jobs SET next_run_at = ? WHERE id = ?').run(Date.now() - 1, job!.id);
    warden.cron.scheduler.poke();
    await botPostIn(DEV, 'Daily digest: 3 open PRs, CI green.');

    const jobTurn = model.requests.find((r) => lastUserText(r).includes('Scheduled job'))!;
    expect(toolNames(jobTurn)).not.toContain('cron');
    expect(toolNames(jobTurn)).toContain('exec');
    await expect.poll(() => warden.cron.jobs.runs(job!.id)[0]?.status, { timeout: 5_000 }).toBe('ok');
  });

  it('a non-owner asking to schedule gets no cron tool at all', async () => {
    const before = model.requests.length;
    fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> please schedule something` });
    await expect.poll(() => model.requests.length, { timeout: 10_000 }).toBeGreaterThan(before);
    expect(toolNames(model.requests[before]!)).not.toContain('cron');
  });
});
