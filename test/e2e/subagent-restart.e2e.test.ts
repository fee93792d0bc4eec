// A subagent that outlives its Warden: a parent in #dev spawns a child, Warden stops while the
// child's model call is still open, and after the next start the parent's turn is told the
// child was interrupted by the restart (through the real discord.js adapter and the OpenAI SDK
// against loopback fakes, on the same SQLite data dir).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SubagentRunStore } from '../../src/agent/subagent-runs.js';
import { parseConfig, type LoadedConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';

const GUILD = '300000000000000001';
const DEV = '300000000000000003';
const alice = fakeUser('400000000000000001', 'alice');

let fake: DiscordFake;
let model: FakeModelServer;
let warden: RunningWarden | undefined;
let loaded: LoadedConfig;
let dataDir: string;

const systemOf = (r: FakeRequest): string => (r.body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'system')?.content ?? '';
const isChild = (r: FakeRequest) => systemOf(r).includes('You are a subagent');
const userTexts = (r: FakeRequest): string =>
  JSON.stringify((r.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').map((m) => m.content));

function respond(r: FakeRequest): FakeReply {
  // The child never answers before Warden stops (the fake drops it when the connection closes).
  if (isChild(r)) return { kind: 'reply', text: 'never sent', delayMs: 60_000 };
  const last = r.body.messages.at(-1);
  if (last?.role === 'tool') return { kind: 'reply', text: 'A subagent is on it.' };
  const said = userTexts(r);
  if (said.includes('interrupted')) return { kind: 'reply', text: 'The research subagent was interrupted by a restart.' };
  if (said.includes('research')) return { kind: 'reply', toolCalls: [{ name: 'sessions_spawn', args: { task: 'research the flaky test', label: 'research' } }] };
  return { kind: 'reply', text: 'ok' };
}

async function start(): Promise<RunningWarden> {
  const started = await startWarden(loaded, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  return started.warden;
}

beforeAll(async () => {
  fake = await startDiscordFake();
  model = await startFakeOpenAI({ respond });
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-subagent-restart-'));
  mkdirSync(path.join(dir, 'workspace'));
  dataDir = path.join(dir, 'data');
  const parsed = parseConfig({
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'coding', alsoAllow: ['sessions_spawn', 'subagents'] },
    channels: { discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { dev: { tools: { allow: ['read', 'sessions_spawn', 'subagents'] } } } } } } },
    dataDir,
  });
  if (!parsed.ok) throw parsed.error;
  loaded = { ...parsed.value, baseDir: dir };
  warden = await start();
  await fake.frames.waitFor((f) => f.op === 2, 5_000, 'IDENTIFY');
});
afterAll(async () => {
  await warden?.stop();
  await fake?.close();
  await model?.close();
});

const botPostIn = (channelId: string, text: string) =>
  fake.requests.waitFor((r) => r.method === 'POST' && r.path === `/channels/${channelId}/messages` && String(r.body?.content ?? '').includes(text), 10_000, text);

describe('subagents across a restart', () => {
  it('a child running when Warden stops is reported interrupted to its parent after the next start', async () => {
    fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> please research the flaky test` });
    await botPostIn(DEV, 'A subagent is on it.');
    await expect.poll(() => model.requests.some(isChild), { timeout: 10_000 }).toBe(true);
    // The child's ceiling is the parent's #dev surface.
    const child = model.requests.find(isChild)!;
    expect(((child.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name).sort()).toEqual(['read']);

    await warden!.stop();
    const between = await openWardenStore({ dataDir });
    if (!between.ok) throw new Error(between.error.message);
    const [run] = await new SubagentRunStore(between.store.db).ofParent(`agent:main:discord:channel:${DEV}`);
    await between.store.close();
    expect(run).toMatchObject({ label: 'research', status: 'running', depth: 1, role: 'leaf', inherited: { allow: expect.arrayContaining(['read', 'sessions_spawn', 'subagents']) } });

    const identified = fake.frames.filter((f) => f.op === 2).length;
    warden = await start();
    await expect.poll(() => fake.frames.filter((f) => f.op === 2).length, { timeout: 5_000 }).toBeGreaterThan(identified);
    expect(await new SubagentRunStore(warden.store.db).get(run!.runId)).toMatchObject({ status: 'interrupted', result: expect.stringContaining('Warden restarted') });

    fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> any news?` });
    await botPostIn(DEV, 'The research subagent was interrupted by a restart.');
  });
});
