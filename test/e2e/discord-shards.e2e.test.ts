// Discord sharding through the real discord.js client on the loopback fake, which speaks the
// gateway's sharding protocol: IDENTIFY carries `shard: [id, count]`, each shard receives the
// guilds `(guild_id >> 22) % count` assigns it (and their messages and clicks), DMs go to
// shard 0. One Warden runs every shard over one store; commands are registered once.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIMessage, APIUser } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalAction } from '../../adapters/common/approval-card.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { fakeUser, shardOfGuild, startDiscordFake, type DiscordFake, type FakeGuild } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { LIST_REQUEST, respond } from './approvals-model.js';

// Two guilds Discord's formula puts on different shards of two: 1 << 22 apart.
const ALPHA: FakeGuild = { id: '300000000000000001', name: 'Alpha', channels: [{ id: '300000000000000002', name: 'general', type: 0 }] };
const BETA: FakeGuild = { id: '300000000004194305', name: 'Beta', channels: [{ id: '300000000004194306', name: 'ops', type: 0 }] };
const ALPHA_GENERAL = ALPHA.channels[0]!.id;
const BETA_OPS = BETA.channels[0]!.id;
const alice = fakeUser('400000000000000001', 'alice');
const olga = fakeUser('400000000000000009', 'olga');

let fake: DiscordFake;
let model: FakeModelServer;
const running: RunningWarden[] = [];

beforeAll(async () => {
  // A large bot's session limit (16 identifies at once), so both shards connect without the 5 s wait.
  fake = await startDiscordFake({ guilds: [ALPHA, BETA], shards: 2, maxConcurrency: 16 });
  model = await startFakeOpenAI({ respond });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await fake?.close();
  await model?.close();
});

async function start(shards: 'auto' | number, extra: Record<string, unknown> = {}): Promise<RunningWarden> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-shards-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  writeFileSync(path.join(dir, 'workspace', 'notes.md'), '# notes\n');
  const parsed = parseConfig({
    owners: { discord: [olga.id] },
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'coding', exec: { host: 'gateway' } },
    channels: { discord: { token: 'test-token', apiBaseUrl: fake.apiBaseUrl, streaming: false, shards, guilds: { [BETA.id]: { tools: { allow: ['*'] } } } } },
    dataDir: path.join(dir, 'data'),
    ...extra,
  });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {}, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  return started.warden;
}

const mark = () => fake.requests.records.length;
function botPost(channelId: string, from: number, pred: (body: any) => boolean = () => true): Promise<RecordedRequest> {
  return fake.requests.waitFor(
    (r) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${channelId}/messages` && pred(r.body),
    8_000,
    `bot message in ${channelId}`,
  );
}
const say = (author: APIUser, channelId: string, content: string) => fake.userMessage({ author, channelId, content: `<@${fake.bot.id}> ${content}` })!;
const cardButtons = (message: APIMessage) => (message.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);
const commandWrites = (from: number) => fake.requests.records.slice(from).filter((r) => /^\/applications\/\d+\/commands$/.test(r.path));

describe('Discord shards end to end', () => {
  it('two shards: each identifies with its shard, each guild is answered on its own shard, commands are registered once', async () => {
    expect([shardOfGuild(ALPHA.id, 2), shardOfGuild(BETA.id, 2)]).toEqual([0, 1]);
    const from = mark();
    const framesFrom = fake.frames.records.length;
    await start(2);
    const identifies = fake.frames.records.slice(framesFrom).filter((f) => f.op === 2);
    expect(identifies.map((f) => f.d.shard).sort()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    expect(fake.identifiedShards).toEqual([0, 1]);
    // One GET (and one PUT, the first time) for the application, not one per shard.
    const writes = commandWrites(from);
    expect(writes.map((r) => r.method)).toEqual(['GET', 'PUT']);

    let at = mark();
    say(alice, ALPHA_GENERAL, 'ping');
    expect((await botPost(ALPHA_GENERAL, at)).body.content).toBe('pong');
    at = mark();
    say(alice, BETA_OPS, 'ping');
    expect((await botPost(BETA_OPS, at)).body.content).toBe('pong');
    // DMs arrive on shard 0, and are answered too.
    at = mark();
    fake.userMessage({ author: alice, dm: true, content: 'ping' });
    expect((await botPost(fake.dmChannelOf(alice.id), at)).body.content).toBe('pong');

    at = mark();
    say(alice, BETA_OPS, '/status');
    expect((await botPost(BETA_OPS, at)).body.content).toMatch(/Chat: discord \(2 shards: #0 ready; #1 ready\)/);
  });

  it('an approval card in a guild on shard 1 is decided by a click that arrives on shard 1', async () => {
    const warden = await start(2);
    const at = mark();
    say(alice, BETA_OPS, LIST_REQUEST);
    await botPost(BETA_OPS, at, (b) => Array.isArray(b.components) && b.components.length > 0);
    const card = fake.botMessagesIn(BETA_OPS).filter((m) => cardButtons(m).length > 0).at(-1)!;
    const allow = cardButtons(card).find((id) => decodeApprovalAction(id)?.decision === 'allow-once')!;
    expect(await warden.approvals.list()).toHaveLength(1);

    expect(fake.shardOf(BETA.id)).toBe(1);
    const click = fake.click({ message: card, customId: allow, user: olga });
    await fake.requests.waitFor((r) => r.path.includes(click.token) && JSON.stringify(r.body).includes(`Allowed once by <@${olga.id}>`), 5_000, 'card edit');
    expect(await warden.approvals.list()).toHaveLength(0);
    // The call waited for the click, ran, and the model's answer came back to the same channel.
    expect((await botPost(BETA_OPS, at, (b) => typeof b.content === 'string' && b.content.includes('notes.md'))).body.content).toBe('Listed right away: notes.md is there.');
  });

  it('shards: auto opens the count /gateway/bot recommends', async () => {
    const framesFrom = fake.frames.records.length;
    await start('auto');
    const identifies = fake.frames.records.slice(framesFrom).filter((f) => f.op === 2);
    expect(identifies.map((f) => f.d.shard[1])).toEqual([2, 2]);
  });

  it('a shard that drops reconnects, resumes its session, and /status reports the reconnect', async () => {
    await start(2);
    const framesFrom = fake.frames.records.length;
    fake.dropShard(1);
    const resume = await fake.frames.waitFor((f) => fake.frames.records.indexOf(f) >= framesFrom && f.op === 6, 8_000, 'RESUME');
    expect(resume.d.session_id).toBe('fake-session-2');
    // No fresh IDENTIFY: the shard continued its session.
    expect(fake.frames.records.slice(framesFrom).filter((f) => f.op === 2)).toHaveLength(0);
    let at = mark();
    say(alice, BETA_OPS, 'ping');
    expect((await botPost(BETA_OPS, at)).body.content).toBe('pong');
    at = mark();
    say(alice, ALPHA_GENERAL, '/status');
    expect((await botPost(ALPHA_GENERAL, at)).body.content).toMatch(/2 shards: #0 ready; #1 ready, 1 reconnect\)/);
  });

  it("warden doctor shows the shard count Discord recommends and each running shard's state", async () => {
    const warden = await start('auto', { ops: { port: 0 } });
    const opsPort = new URL(warden.opsUrl!).port;
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-shards-doctor-'));
    const config = path.join(dir, 'warden.config.yaml');
    writeFileSync(
      config,
      JSON.stringify({ channels: { discord: { token: 'test-token', apiBaseUrl: fake.apiBaseUrl, shards: 'auto' } }, ops: { port: Number(opsPort) }, tools: { exec: { host: 'gateway' } }, dataDir: path.join(dir, 'data') }),
    );
    const bin = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));
    const run = await execa('node', [bin, 'doctor', '--json', '--config', config], { cwd: dir, env: { WARDEN_LOG_LEVEL: 'warn', WARDEN_DATA_DIR: '' }, reject: false, timeout: 60_000 });
    const checks = (JSON.parse(run.stdout) as { checks: Array<{ name: string; ok: boolean; detail: string }> }).checks;
    expect(checks.find((c) => c.name === 'discord shards')).toEqual({ name: 'discord shards', ok: true, detail: 'auto: 2 shards (Discord recommends 2)' });
    expect(checks.find((c) => c.name === 'discord shards now')).toEqual({ name: 'discord shards now', ok: true, detail: 'discord (2 shards: #0 ready; #1 ready)' });
  });
});
