// Two agents bound to two channels, through the real discord.js adapter on the loopback fake:
// each channel answers as its own agent with its own tools, `/status` names the binding, and a
// channel with its own approvers has its cards decided by them. A role binding routes a member
// with the role (as the gateway sends it in `member.roles`) to its agent, others to the default.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIMessage, APIUser } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalAction } from '../../adapters/common/approval-card.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { defaultGuild, fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import type { RecordedRequest } from '../fakes/recorder.js';

const GUILD = '300000000000000001';
const GENERAL = '300000000000000002';
const DEV = '300000000000000003';
const alice = fakeUser('400000000000000001', 'alice');
const bob = fakeUser('400000000000000002', 'bob');
const olga = fakeUser('400000000000000009', 'olga');
const carol = fakeUser('400000000000000003', 'carol');
const ONCALL = '300000000000000077';
const STAFF = '300000000000000078';

let fake: DiscordFake;
const running: RunningWarden[] = [];
beforeAll(async () => {
  // carol holds the on-call role; alice only an unrelated one.
  fake = await startDiscordFake({
    guilds: [{ ...defaultGuild, roles: [{ id: ONCALL, name: 'on-call' }, { id: STAFF, name: 'staff' }], members: { [carol.id]: [STAFF, ONCALL], [alice.id]: [STAFF] } }],
  });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await fake?.close();
});

async function start(): Promise<RunningWarden> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-bindings-e2e-'));
  for (const w of ['workspace', 'ops-workspace']) mkdirSync(path.join(dir, w));
  const parsed = parseConfig({
    owners: { discord: [olga.id] },
    tools: { profile: 'coding', exec: { host: 'gateway' } },
    agents: {
      list: [
        { id: 'main', default: true, tools: { deny: ['exec', 'process'] } },
        { id: 'ops', workspace: './ops-workspace' },
      ],
    },
    bindings: [
      { agentId: 'ops', comment: 'the ops room', match: { channel: 'discord', peer: { kind: 'channel', id: DEV } } },
      { agentId: 'ops', comment: 'on-call people', match: { channel: 'discord', guildId: GUILD, roles: [ONCALL] } },
    ],
    channels: {
      discord: {
        token: 'test-token',
        apiBaseUrl: fake.apiBaseUrl,
        guilds: { [GUILD]: { channels: { dev: { approvals: { approvers: [bob.id] } } } } },
      },
    },
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const from = Date.now();
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {}, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  await fake.frames.waitFor((f) => f.op === 2 && f.at >= from, 5_000, 'IDENTIFY');
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

describe('bindings end to end (Discord)', () => {
  it('#dev answers as the ops agent with its tools, #general as main without exec', async () => {
    await start();
    let from = mark();
    say(alice, DEV, '/status');
    expect((await botPost(DEV, from)).body.content).toContain('Agent: ops (bindings[0], binding.peer)');
    from = mark();
    say(alice, GENERAL, '/status');
    expect((await botPost(GENERAL, from)).body.content).toContain('Agent: main (no binding matched: the default agent)');

    from = mark();
    say(alice, DEV, '/tools');
    expect((await botPost(DEV, from)).body.content.split('\n')[0]).toMatch(/\bexec\b/);
    from = mark();
    say(alice, GENERAL, '/tools');
    const general = (await botPost(GENERAL, from)).body.content;
    expect(general.split('\n')[0]).not.toMatch(/\bexec\b/);
    expect(general).toContain('• exec — removed by');
  });

  it('a role binding routes a member with the role to its agent, one without it to the default', async () => {
    await start();
    let from = mark();
    say(carol, GENERAL, '/status');
    expect((await botPost(GENERAL, from)).body.content).toContain('Agent: ops (bindings[1], binding.guild+roles)');
    from = mark();
    say(alice, GENERAL, '/status');
    expect((await botPost(GENERAL, from)).body.content).toContain('Agent: main (no binding matched: the default agent)');
    // The peer binding is more specific than the role one: #dev is ops for everyone.
    from = mark();
    say(alice, DEV, '/status');
    expect((await botPost(DEV, from)).body.content).toContain('Agent: ops (bindings[0], binding.peer)');

    // A slash command carries the member's roles as well (the interaction's `member.roles`).
    const carolCommand = fake.command({ name: 'status', user: carol, channelId: GENERAL });
    const aliceCommand = fake.command({ name: 'status', user: alice, channelId: GENERAL });
    const answer = async (token: string) =>
      JSON.stringify((await fake.requests.waitFor((r) => r.path.includes(token) && r.method === 'PATCH', 5_000, 'command answer')).body);
    expect(await answer(carolCommand.token)).toContain('Agent: ops (bindings[1], binding.guild+roles)');
    expect(await answer(aliceCommand.token)).toContain('Agent: main (no binding matched');
  });

  it("#dev's own approver decides its cards; the platform owner is refused there", async () => {
    const warden = await start();
    const from = mark();
    say(alice, DEV, '/exec echo hi');
    await botPost(DEV, from, (b) => Array.isArray(b.components) && b.components.length > 0);
    const card = fake.botMessagesIn(DEV).filter((m) => cardButtons(m).length > 0).at(-1)!;
    const allow = cardButtons(card).find((id) => decodeApprovalAction(id)?.decision === 'allow-once')!;
    const [request] = await warden.approvals.list();
    expect(request?.approvers).toEqual([bob.id]);
    expect(request?.agentId).toBe('ops');

    const refused = fake.click({ message: card, customId: allow, user: olga });
    await fake.requests.waitFor((r) => r.path.includes(refused.token) && JSON.stringify(r.body).includes('not allowed'), 5_000, 'refusal');
    expect(await warden.approvals.list()).toHaveLength(1);
    const approved = fake.click({ message: card, customId: allow, user: bob });
    await fake.requests.waitFor((r) => r.path.includes(approved.token) && JSON.stringify(r.body).includes(`Allowed once by <@${bob.id}>`), 5_000, 'card edit');
  });
});
