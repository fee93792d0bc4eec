// Discord shards split over processes: two `warden start` processes on one PostgreSQL database,
// one running shard 0 and the other shard 1 of two (`shards: [id]` with `shardCount: 2`).
// Discord sends each guild's events to the shard `(guild_id >> 22) % 2` and DMs to shard 0, so
// an approval card raised by the shard-1 process for a request in its guild, posted also in
// the approver's DM, is clicked there — and the click reaches the shard-0 process. The request
// is decided once, the held command runs once, and the answer comes back where it was asked.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIMessage } from 'discord-api-types/v10';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalAction } from '../../adapters/common/approval-card.js';
import { freshStoreTarget } from '../store-engines.js';
import { fakeUser, shardOfGuild, startDiscordFake, type DiscordFake, type FakeGuild } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { LIST_REQUEST, respond } from '../e2e/approvals-model.js';
import { BIN, runsIn, sharedWorkspace, until } from './harness.js';

// Two guilds Discord's formula puts on different shards of two: 1 << 22 apart.
const ALPHA: FakeGuild = { id: '300000000000000001', name: 'Alpha', channels: [{ id: '300000000000000002', name: 'general', type: 0 }] };
const BETA: FakeGuild = { id: '300000000004194305', name: 'Beta', channels: [{ id: '300000000004194306', name: 'ops', type: 0 }] };
const BETA_OPS = BETA.channels[0]!.id;
const alice = fakeUser('400000000000000001', 'alice');
const olga = fakeUser('400000000000000009', 'olga');

let fake: DiscordFake;
let model: FakeModelServer;
const processes: Array<{ child: ResultPromise; output: () => string }> = [];

async function startShard(shard: number, storeUrl: string, workspace: string) {
  const dir = mkdtempSync(path.join(tmpdir(), `warden-shard-${shard}-`));
  mkdirSync(path.join(dir, 'data'));
  writeFileSync(
    path.join(dir, 'warden.config.yaml'),
    JSON.stringify({
      owners: { discord: [olga.id] },
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: { profile: 'coding', exec: { host: 'gateway' } },
      agents: { defaults: { workspace } },
      // The card goes to the channel and to each approver's DM (DMs are shard 0's).
      approvals: { target: 'both' },
      channels: { discord: { token: 'test-token', apiBaseUrl: fake.apiBaseUrl, streaming: false, shards: [shard], shardCount: 2, guilds: { [BETA.id]: { tools: { allow: ['*'] } } } } },
      store: { url: '${WARDEN_STORE_URL}', leaseSec: 5 },
      dataDir: './data',
    }),
  );
  const child = execa('node', [BIN, 'start'], { cwd: dir, env: { WARDEN_LOG_LEVEL: 'info', WARDEN_DATA_DIR: '', WARDEN_STORE_URL: storeUrl, OPENAI_API_KEY: 'sk-fake' }, reject: false });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  processes.push({ child, output: () => out });
  await until(() => out.includes('Warden is running') || child.exitCode !== null, 60_000, `shard ${shard}'s process`);
  if (!out.includes('Warden is running')) throw new Error(`shard ${shard}'s process exited:\n${out}`);
  return { child, output: () => out };
}

beforeAll(async () => {
  // A large bot's session limit, so both shards identify without the 5 s wait.
  fake = await startDiscordFake({ guilds: [ALPHA, BETA], shards: 2, maxConcurrency: 16 });
  model = await startFakeOpenAI({ respond });
});
afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null) p.child.kill('SIGTERM');
  await Promise.all(processes.map((p) => p.child));
  await fake?.close();
  await model?.close();
});

const cardButtons = (message: APIMessage) => (message.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);
const cardsIn = (channelId: string) => fake.botMessagesIn(channelId).filter((m) => cardButtons(m).length > 0);

describe('Discord shards across processes on one store', () => {
  it("a card raised on shard 1's process is decided by a click that reaches shard 0's process", async () => {
    expect([shardOfGuild(ALPHA.id, 2), shardOfGuild(BETA.id, 2)]).toEqual([0, 1]);
    const { url } = await freshStoreTarget('postgres');
    const workspace = sharedWorkspace();
    writeFileSync(path.join(workspace, 'notes.md'), '# notes\n');
    const zero = await startShard(0, url!, workspace);
    const one = await startShard(1, url!, workspace);
    await until(() => fake.identifiedShards.length === 2, 30_000, 'both shards identified');
    expect(fake.identifiedShards).toEqual([0, 1]);
    // Each process identified with its own shard only.
    expect(fake.frames.records.filter((f) => f.op === 2).map((f) => f.d.shard).sort()).toEqual([
      [0, 2],
      [1, 2],
    ]);

    fake.userMessage({ author: alice, channelId: BETA_OPS, content: `<@${fake.bot.id}> ${LIST_REQUEST}` });
    const dm = fake.dmChannelOf(olga.id);
    await until(() => cardsIn(BETA_OPS).length > 0 && cardsIn(dm).length > 0, 30_000, 'the card in the channel and in the DM');
    const card = cardsIn(dm).at(-1)!;
    const allow = cardButtons(card).find((id) => decodeApprovalAction(id)?.decision === 'allow-once')!;

    // A DM has no guild: Discord hands the click to shard 0, the other process.
    expect(fake.shardOf(undefined)).toBe(0);
    const click = fake.click({ message: card, customId: allow, user: olga });
    await fake.requests.waitFor((r) => r.path.includes(click.token) && JSON.stringify(r.body).includes(`Allowed once by <@${olga.id}>`), 20_000, 'the clicked card edited');
    // The held command ran once and the answer came back to the channel it was asked in.
    await until(() => fake.botMessagesIn(BETA_OPS).some((m) => m.content === 'Listed right away: notes.md is there.'), 30_000, 'the answer in #ops');
    await new Promise((r) => setTimeout(r, 500));
    expect(runsIn(workspace)).toBe(1);
    expect(fake.botMessagesIn(BETA_OPS).filter((m) => m.content === 'Listed right away: notes.md is there.')).toHaveLength(1);
    // The channel's copy of the card shows the decision too, without buttons.
    await until(() => cardsIn(BETA_OPS).length === 0, 20_000, "the channel's card without buttons");
    expect(zero.output()).not.toContain('"level":50');
    expect(one.output()).not.toContain('"level":50');
  }, 150_000);
});
