// Approvals that never hold a conversation, end to end: Warden as `warden start` runs it with
// the real discord.js and Bolt adapters on the loopback fakes and a scripted model (the
// OpenAI-compatible fake through the real SDK). The model asks for a command the allowlist does
// not cover; the card waits while the conversation goes on; after the click the output is posted
// under the card and the agent finishes its task in a follow-up turn.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalAction } from '../../adapters/common/approval-card.js';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { startSlackFake, type SlackFake, type SlackMessage } from '../fakes/slack/index.js';
import { COMMAND, LIST_REQUEST, lastUserText, messagesOf, respond, textOf } from './approvals-model.js';

const GUILD = '300000000000000001';
const DEV = '300000000000000003';
const alice = fakeUser('400000000000000001', 'alice');
const olga = fakeUser('400000000000000009', 'olga');

const runsIn = (dir: string) => (existsSync(path.join(dir, 'workspace', 'runs.log')) ? readFileSync(path.join(dir, 'workspace', 'runs.log'), 'utf8').split('\n').filter(Boolean).length : 0);

function workspaceDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  mkdirSync(path.join(dir, 'workspace'));
  writeFileSync(path.join(dir, 'workspace', 'notes.md'), '# notes\n');
  writeFileSync(path.join(dir, 'workspace', 'plan.txt'), 'plan\n');
  return dir;
}

let model: FakeModelServer;
const running: RunningWarden[] = [];

beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await model?.close();
});

describe('Discord: a card waits, the conversation does not', () => {
  let fake: DiscordFake;
  beforeAll(async () => {
    fake = await startDiscordFake();
  });
  afterAll(async () => {
    await fake?.close();
  });

  function config(dir: string, approvals: Record<string, unknown> = {}) {
    return {
      owners: { discord: [olga.id] },
      approvals,
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: { profile: 'coding', exec: { host: 'gateway' } },
      channels: { discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { dev: { tools: { allow: ['*'] } } } } } } },
      dataDir: path.join(dir, 'data'),
    };
  }

  async function start(dir: string, approvals: Record<string, unknown> = {}): Promise<RunningWarden> {
    const parsed = parseConfig(config(dir, approvals));
    if (!parsed.ok) throw parsed.error;
    const from = Date.now();
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    running.push(started.warden);
    await fake.frames.waitFor((f) => f.op === 2 && f.at >= from, 5_000, 'IDENTIFY');
    return started.warden;
  }

  const mark = () => fake.requests.records.length;
  const after = (from: number) => (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from;
  const botPost = (from: number, pred: (body: any) => boolean, what: string, timeout = 10_000) =>
    fake.requests.waitFor((r) => after(from)(r) && r.method === 'POST' && r.path === `/channels/${DEV}/messages` && pred(r.body), timeout, what);
  const says = (text: string) => (b: any) => typeof b.content === 'string' && b.content.includes(text);
  const buttons = (m: APIMessage) => (m.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);
  const ask = (text: string) => fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> ${text}` });
  async function cardAfter(from: number): Promise<APIMessage> {
    await botPost(from, (b) => Array.isArray(b.components) && b.components.length > 0, 'approval card');
    return fake.botMessagesIn(DEV).filter((m) => buttons(m).length > 0).at(-1)!;
  }
  const click = (card: APIMessage, user = olga) => fake.click({ message: card, customId: buttons(card).find((id) => decodeApprovalAction(id)?.decision === 'allow-once')!, user });

  it('while the card waits in #dev a second message is answered within a second; after the click the output is posted under the card and the agent finishes', async () => {
    const dir = workspaceDir('warden-approvals-discord-');
    const warden = await start(dir);
    const from = mark();
    ask(LIST_REQUEST);
    const card = await cardAfter(from);
    const id = JSON.stringify(card.embeds).match(/ID: ([0-9a-f]{10})/)![1]!;
    expect(card.embeds[0]!.fields).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Requested by', value: `the agent for <@${alice.id}>` })]));
    expect(JSON.stringify(card.embeds)).toContain(COMMAND);

    // approvals.waitSec (5 s by default) passes without a click: the turn ends with the pending note.
    await botPost(from, says('waits for an approval'), 'the pending reply', 12_000);
    expect((await warden.approvals.get(id))!.status).toBe('pending');

    const pingAt = mark();
    const sentAt = performance.now();
    ask('ping');
    await botPost(pingAt, says('pong'), 'pong');
    expect(performance.now() - sentAt).toBeLessThan(1_000);

    const listAt = mark();
    ask('/approvals');
    const listed = await botPost(listAt, says('Pending approvals here'), '/approvals');
    expect(listed.body.content).toContain(`• ${id} — exec \`${COMMAND}\` — by the agent for Alice —`);
    expect(runsIn(dir)).toBe(0);

    const clickAt = mark();
    click(card);
    const result = await botPost(clickAt, (b) => says('```')(b) && says(`Approval ${id}`)(b), 'the result under the card');
    expect(result.body.message_reference).toMatchObject({ message_id: card.id });
    expect(result.body.content).toMatch(/notes\.md\nplan\.txt/);
    const done = await botPost(clickAt, says('Done: the workspace holds notes.md and plan.txt.'), 'the agent finishing its task');
    expect(done.body.message_reference).toBeUndefined();
    expect(runsIn(dir)).toBe(1);

    // The follow-up turn acted for alice and read the output as untrusted data under Warden's own words.
    const followUp = model.requests.find((r) => lastUserText(r).includes(`[Approval ${id}]`))!;
    expect(lastUserText(followUp)).toMatch(new RegExp(`\\[Approval ${id}\\] Allowed once by discord:${olga.id}\\. Your earlier exec call .* has now been run\\. Its result:\\n<untrusted-[0-9a-f]+ source="tool:exec">\\n[\\s\\S]*notes\\.md`));
    const system = textOf(messagesOf(followUp).find((m) => m.role === 'system')!.content);
    expect(system).toContain('pending approval <id>');
    // The history the model saw holds the whole story, in order.
    const story = messagesOf(followUp).map((m) => `${m.role}:${textOf(m.content)}`);
    const pendingAt = story.findIndex((s) => s.startsWith('tool:') && s.includes(`pending approval ${id}`));
    const noteAt = story.findIndex((s) => s.startsWith('assistant:') && s.includes('waits for an approval'));
    const pingAt2 = story.findIndex((s) => s.startsWith('user:') && s.includes('ping'));
    const outcomeAt = story.findIndex((s) => s.startsWith('user:') && s.includes(`[Approval ${id}]`));
    expect([pendingAt, noteAt, pingAt2, outcomeAt].every((i) => i > 0)).toBe(true);
    expect(pendingAt < noteAt && noteAt < pingAt2 && pingAt2 < outcomeAt).toBe(true);
    expect(outcomeAt).toBe(story.length - 1);

    // The card is closed; a second click runs nothing.
    const again = click(card);
    await fake.requests.waitFor((r) => r.path.includes(again.token) && JSON.stringify(r.body).includes('already resolved'), 8_000, 'already resolved');
    await sleep(200);
    expect(runsIn(dir)).toBe(1);
  }, 40_000);

  it("an approver's click from another channel or from their DM (cards go to the channel) is refused privately and runs nothing; from the card's channel it runs", async () => {
    const dir = workspaceDir('warden-approvals-origin-');
    const warden = await start(dir, { waitSec: 0 });
    const from = mark();
    ask(LIST_REQUEST);
    const card = await cardAfter(from);
    const id = JSON.stringify(card.embeds).match(/ID: ([0-9a-f]{10})/)![1]!;
    for (const channel_id of ['300000000000000002', fake.dmChannelOf(olga.id)]) {
      const elsewhere = click({ ...card, channel_id });
      const refused = await fake.requests.waitFor((r) => r.path.includes(elsewhere.token) && JSON.stringify(r.body).includes('can only be decided where it was posted'), 8_000, 'refused elsewhere');
      expect(refused.body.flags & 64).toBe(64);
    }
    await sleep(200);
    expect((await warden.approvals.get(id))!.status).toBe('pending');
    expect(runsIn(dir)).toBe(0);
    const audited = await warden.approvals.audit.list({ typePrefix: 'approval.refused' });
    expect(audited.filter((e) => e.subject === id)).toHaveLength(2);
    const clickAt = mark();
    click(card);
    await botPost(clickAt, (b) => says('```')(b) && says(`Approval ${id}`)(b), 'the result under the card');
    expect(runsIn(dir)).toBe(1);
  }, 40_000);

  it('a deny is posted under the card and the agent is told the outcome, not to retry', async () => {
    const dir = workspaceDir('warden-approvals-deny-');
    await start(dir, { waitSec: 0 });
    const from = mark();
    ask(LIST_REQUEST);
    const card = await cardAfter(from);
    await botPost(from, says('waits for an approval'), 'the pending reply');
    const clickAt = mark();
    fake.click({ message: card, customId: buttons(card).find((b) => decodeApprovalAction(b)?.decision === 'deny')!, user: olga });
    const result = await botPost(clickAt, says('Did not run: the approver denied it.'), 'the refusal under the card');
    expect(result.body.message_reference).toMatchObject({ message_id: card.id });
    await botPost(clickAt, says('It did not run, so I cannot list the files.'), 'the agent told');
    expect(runsIn(dir)).toBe(0);
  });

  it('a card decided after a graceful restart runs once in the new process, and the agent finishes there', async () => {
    const dir = workspaceDir('warden-approvals-restart-');
    const first = await start(dir, { waitSec: 0 });
    const from = mark();
    ask(LIST_REQUEST);
    const card = await cardAfter(from);
    await botPost(from, says('waits for an approval'), 'the pending reply');
    await first.stop();
    running.splice(running.indexOf(first), 1);

    const restartAt = mark();
    await start(dir, { waitSec: 0 });
    const refreshed = await fake.requests.waitFor((r) => after(restartAt)(r) && r.method === 'PATCH' && r.path === `/channels/${DEV}/messages/${card.id}`, 8_000, 'card refresh');
    expect(refreshed.body.components?.[0]?.components?.length).toBeGreaterThan(0);

    const clickAt = mark();
    click(card);
    const result = await botPost(clickAt, says('```'), 'the result under the card');
    expect(result.body.message_reference).toMatchObject({ message_id: card.id });
    await botPost(clickAt, says('Done: the workspace holds notes.md and plan.txt.'), 'the agent finishing its task');
    expect(runsIn(dir)).toBe(1);
  });
});

describe('Slack: the result goes into the thread of the card', () => {
  const SECRET = 'approvals-e2e-secret';
  const CHANNEL = 'C0000DEV';
  const ALICE = 'U0000ALICE';
  const OLGA = 'U0000OLGA';
  let fake: SlackFake;
  beforeAll(async () => {
    fake = await startSlackFake();
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('while the card waits the channel answers; after the click the output is a thread reply under the card and the agent finishes', async () => {
    const dir = workspaceDir('warden-approvals-slack-');
    const parsed = parseConfig({
      owners: { slack: [OLGA] },
      approvals: { waitSec: 0 },
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: { profile: 'coding', exec: { host: 'gateway' } },
      channels: { slack: { botToken: 'xoxb-fake', signingSecret: SECRET, streaming: false, apiUrl: fake.apiUrl, port: 0, host: '127.0.0.1', channels: { '#dev': { tools: { allow: ['*'] } } } } },
      dataDir: path.join(dir, 'data'),
    });
    if (!parsed.ok) throw parsed.error;
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    running.push(started.warden);
    const url = (started.warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;
    const say = (text: string) => fake.sendEvent(url, fake.envelope(fake.messageEvent({ user: ALICE, channel: CHANNEL, text: `<@${fake.bot.userId}> ${text}`, type: 'app_mention' })), { secret: SECRET });
    const posted = (pred: (body: any) => boolean, what: string) => fake.requests.waitFor((r) => r.path === '/api/chat.postMessage' && r.body.channel === CHANNEL && pred(r.body), 10_000, what);

    await say(LIST_REQUEST);
    await posted((b) => Array.isArray(b.blocks), 'approval card');
    const card = [...fake.messages.values()].find((m) => m.channel === CHANNEL && m.blocks?.some((b) => b.type === 'actions'))! as SlackMessage;
    expect(JSON.stringify(card.blocks)).toContain(`*Requested by:* the agent for <@${ALICE}>`);
    await posted((b) => String(b.text).includes('waits for an approval'), 'the pending reply');

    const sentAt = performance.now();
    await say('ping');
    await posted((b) => b.text === 'pong', 'pong');
    expect(performance.now() - sentAt).toBeLessThan(1_000);

    const button = card.blocks!.find((b) => b.type === 'actions')!.elements.find((b: any) => b.action_id === 'warden_approval_allow-once');
    await fake.sendAction(url, fake.blockActions({ message: card, actionId: button.action_id, value: button.value, user: OLGA }), { secret: SECRET });
    const result = await posted((b) => String(b.text).includes('notes.md') && String(b.text).startsWith('Approval'), 'the result in the thread');
    expect(result.body.thread_ts).toBe(card.ts);
    const done = await posted((b) => String(b.text).includes('Done: the workspace holds notes.md and plan.txt.'), 'the agent finishing its task');
    expect(done.body.thread_ts).toBeUndefined();
    expect(runsIn(dir)).toBe(1);
  }, 30_000);
});
