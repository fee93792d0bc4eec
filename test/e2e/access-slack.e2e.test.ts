// Who may make Warden act on Slack, end to end: the real Bolt adapter (HTTP receiver) against the
// loopback Slack fake, which serves user groups as Slack's Web API does; the model fake counts
// requests. A refused message costs no model request.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { startSlackFake, type SlackFake, type SlackMessage } from '../fakes/slack/index.js';

const SECRET = 'e2e-signing-secret';
const GENERAL = 'C0000GEN';
const DEV = 'C0000DEV';
const ALICE = 'U0000ALICE';
const BOB = 'U0000BOB';
const MALLORY = 'U0000MALL';
const OLGA = 'U0000OLGA';
const ENGINEERS = 'S0000ENG';

let fake: SlackFake;
let model: FakeModelServer;
const running: RunningWarden[] = [];

beforeAll(async () => {
  fake = await startSlackFake({ usergroups: { [ENGINEERS]: [ALICE] } });
  model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: 'model answer' }) });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await Promise.all([fake?.close(), model?.close()]);
});

async function start(slack: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<{ warden: RunningWarden; url: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-access-slack-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    owners: { slack: [OLGA] },
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'coding', exec: { host: 'gateway' } },
    channels: { slack: { botToken: 'xoxb-fake', signingSecret: SECRET, apiUrl: fake.apiUrl, port: 0, host: '127.0.0.1', streaming: false, ...slack } },
    dataDir: path.join(dir, 'data'),
    ...extra,
  });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  const adapter = started.warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter;
  return { warden: started.warden, url: adapter.eventsUrl! };
}

const signed = { secret: SECRET };
const mark = () => fake.requests.records.length;
const dmOf = (user: string) => `D${user.slice(1)}`;

function post(url: string, user: string, channel: string, text: string, extra?: Record<string, unknown>) {
  const dm = channel.startsWith('D');
  const event = fake.messageEvent({ user, channel, text: dm ? text : `<@${fake.bot.userId}> ${text}`, type: dm ? 'message' : 'app_mention', ...(extra ? { extra } : {}) });
  return fake.sendEvent(url, fake.envelope(event), signed);
}

function reply(channel: string, from: number, pred: (text: string) => boolean = () => true): Promise<RecordedRequest> {
  return fake.requests.waitFor(
    (r) => fake.requests.records.indexOf(r) >= from && r.path === '/api/chat.postMessage' && r.body.channel === channel && pred(String(r.body.text ?? '')),
    20_000,
    `reply in ${channel}`,
  );
}
const postsIn = (channel: string, from: number) => fake.requests.records.slice(from).filter((r) => r.path === '/api/chat.postMessage' && r.body.channel === channel);
const settle = () => sleep(600);

describe('access control on Slack', () => {
  it("an unlisted user's DM gets the refusal and the model records zero requests", async () => {
    const { url, warden } = await start({ dmPolicy: 'allowlist', allowFrom: [`usergroup:${ENGINEERS}`] });
    const before = model.requests.length;
    let from = mark();
    await post(url, MALLORY, dmOf(MALLORY), 'hello');
    expect((await reply(dmOf(MALLORY), from)).body.text).toBe("Sorry, you don't have access to this assistant here.");
    await settle();
    expect(model.requests.length).toBe(before);
    const rows = await warden.store.db.all<{ actor: string }>("SELECT actor FROM audit_events WHERE type = 'access.denied'");
    expect(rows.map((r) => r.actor)).toEqual([`slack:${MALLORY}`]);
    // A member of the user group listed in allowFrom is answered.
    from = mark();
    await post(url, ALICE, dmOf(ALICE), 'hello');
    expect((await reply(dmOf(ALICE), from)).body.text).toContain('model answer');
    expect(model.requests.length).toBe(before + 1);
  }, 60_000);

  it('pairing by button: the owner gets a card in their DM; a non-owner\'s click is refused privately; Approve lets the next DM through', async () => {
    const { url } = await start({ dmPolicy: 'pairing' });
    const before = model.requests.length;
    let from = mark();
    await post(url, BOB, dmOf(BOB), 'let me in');
    const code = /\/pair ([A-Z2-9]{8})/.exec(String((await reply(dmOf(BOB), from)).body.text))?.[1];
    expect(code).toBeDefined();
    await fake.requests.waitFor((r) => fake.requests.records.indexOf(r) >= from && r.path === '/api/chat.postMessage' && r.body.channel === dmOf(OLGA) && Array.isArray(r.body.blocks), 10_000, 'pairing card');
    const card = [...fake.messages.values()].find((m) => m.channel === dmOf(OLGA) && m.blocks?.some((b) => b.type === 'actions'))! as SlackMessage;
    expect(card.text).toContain(code);
    const buttons = card.blocks!.find((b) => b.type === 'actions')!.elements as Array<{ action_id: string; value: string }>;
    const approve = buttons.find((b) => b.action_id === `warden-pair:approve:${code}`)!;

    from = mark();
    await fake.sendAction(url, fake.blockActions({ message: card, actionId: approve.action_id, value: approve.value, user: MALLORY }), signed);
    const refused = await fake.requests.waitFor((r) => fake.requests.records.indexOf(r) >= from && r.path === '/api/chat.postEphemeral', 10_000, 'refusal to mallory');
    expect(refused.body).toMatchObject({ user: MALLORY, text: 'Only an owner of this Warden can decide pairing requests.' });
    from = mark();
    await post(url, BOB, dmOf(BOB), 'now?');
    await settle();
    expect(postsIn(dmOf(BOB), from)).toHaveLength(0);
    expect(model.requests.length).toBe(before);

    from = mark();
    await fake.sendAction(url, fake.blockActions({ message: card, actionId: approve.action_id, value: approve.value, user: OLGA }), signed);
    const edited = await fake.requests.waitFor((r) => fake.requests.records.indexOf(r) >= from && r.path === '/api/chat.update', 10_000, 'card edited');
    expect(edited.body.text).toContain(`Paired ${BOB}`);
    expect(JSON.stringify(edited.body.blocks)).not.toContain('warden-pair:');
    from = mark();
    await post(url, BOB, dmOf(BOB), 'now?');
    expect((await reply(dmOf(BOB), from)).body.text).toContain('model answer');
    expect(model.requests.length).toBe(before + 1);
  }, 60_000);

  it('a channel limited to a user group: the member is answered, others not; a membership change is seen after subteam_members_changed', async () => {
    const { url } = await start({ groupPolicy: 'allowlist', channels: { [GENERAL]: { users: [`usergroup:${ENGINEERS}`] } } });
    const before = model.requests.length;
    let from = mark();
    await post(url, ALICE, GENERAL, 'status?');
    expect((await reply(GENERAL, from)).body.text).toContain('model answer');
    from = mark();
    await post(url, BOB, GENERAL, 'status?');
    expect((await reply(GENERAL, from)).body.text).toBe("Sorry, you don't have access to this assistant here.");
    expect(model.requests.length).toBe(before + 1);
    // #dev is not listed: nobody but owners is answered there, and nobody is told.
    from = mark();
    await post(url, ALICE, DEV, 'status?');
    await settle();
    expect(postsIn(DEV, from)).toHaveLength(0);

    // bob joins the group; Slack tells the app; his next message is answered.
    fake.usergroups[ENGINEERS] = [ALICE, BOB];
    expect((await fake.sendEvent(url, fake.envelope(fake.subteamMembersChanged(ENGINEERS, [BOB])), signed)).status).toBe(200);
    from = mark();
    await post(url, BOB, GENERAL, 'status now?');
    expect((await reply(GENERAL, from, (t) => t.includes('model answer'))).body.text).toContain('model answer');
    expect(model.requests.length).toBe(before + 2);
  }, 60_000);

  it('another app posting with a bot_id is ignored unless allowBots', async () => {
    const { url } = await start({});
    const before = model.requests.length;
    const from = mark();
    await post(url, 'U0000OTHERBOT', GENERAL, 'beep', { bot_id: 'B0000OTHER', subtype: 'bot_message' });
    await settle();
    expect(postsIn(GENERAL, from)).toHaveLength(0);
    expect(model.requests.length).toBe(before);
  }, 60_000);
});
