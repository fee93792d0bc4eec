// Approval rules end to end on the Discord fake: Warden as `warden start` runs it, the real
// discord.js adapter, a scripted model through the real SDK. A `message` to #announcements asks
// under `approvals.rules`, posts only after the click; a quorum-2 rule with a role counts two
// other people; "Deny with reason" reaches the model; a conversation grant covers the same call
// there only; an undecided card escalates to the named channel.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalAction, decodeReasonAction } from '../../adapters/common/approval-card.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { startSlackFake, type SlackFake, type SlackMessage } from '../fakes/slack/index.js';
import type { SlackAdapter } from '../../adapters/slack/index.js';

const GUILD = '300000000000000001';
const DEV = '300000000000000003';
const ANN = '300000000000000011';
const OPS = '300000000000000012';
const LEADS = '500000000000000001';
const alice = fakeUser('400000000000000001', 'alice');
const bob = fakeUser('400000000000000002', 'bob');
const carol = fakeUser('400000000000000003', 'carol');
const olga = fakeUser('400000000000000009', 'olga');

const messagesOf = (r: FakeRequest) => r.body.messages as Array<{ role: string; content: unknown }>;
const textOf = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content));
const lastUserText = (r: FakeRequest) => textOf(messagesOf(r).filter((m) => m.role === 'user').at(-1)?.content);

/** Asked to announce, the model calls `message` to #announcements; told the outcome, it says what it read. */
function respond(r: FakeRequest): FakeReply {
  const last = messagesOf(r).at(-1)!;
  if (last.role === 'tool') {
    const t = textOf(last.content);
    if (t.includes('pending approval')) return { kind: 'reply', text: 'The announcement waits for an approval.' };
    return { kind: 'reply', text: t.includes('Posted to') ? 'Announced right away.' : `Not announced: ${t.slice(0, 300)}` };
  }
  const text = lastUserText(r);
  if (text.includes('[Approval ')) return { kind: 'reply', text: text.includes('has now been run') ? 'The announcement is out.' : 'The announcement did not go out.' };
  const m = /announce (\S+)/.exec(text);
  if (m) return { kind: 'reply', toolCalls: [{ name: 'message', args: { channel: ANN, text: `Release ${m[1]} is out` } }] };
  return { kind: 'reply', text: 'ok' };
}

let model: FakeModelServer;
let fake: DiscordFake;
const running: RunningWarden[] = [];

beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
  fake = await startDiscordFake({
    guilds: [
      {
        id: GUILD,
        name: 'Test Guild',
        channels: [
          { id: '300000000000000002', name: 'general', type: 0 },
          { id: DEV, name: 'dev', type: 0 },
          { id: ANN, name: 'announcements', type: 0 },
          { id: OPS, name: 'ops', type: 0 },
        ],
        roles: [{ id: LEADS, name: 'leads' } as never],
        members: { [alice.id]: [LEADS], [bob.id]: [LEADS], [carol.id]: [LEADS] },
      },
    ],
  });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await fake?.close();
  await model?.close();
});

function config(dir: string, rules: unknown[], approvals: Record<string, unknown> = {}) {
  return {
    owners: { discord: [olga.id] },
    approvals: { waitSec: 0, rules, ...approvals },
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'messaging', message: { allowedTargets: [`discord:${ANN}`] } },
    channels: { discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { dev: { tools: { allow: ['*'] } }, ops: { tools: { allow: ['*'] } } } } } } },
    dataDir: path.join(dir, 'data'),
  };
}

async function start(rules: unknown[], approvals: Record<string, unknown> = {}): Promise<RunningWarden> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-rules-'));
  const parsed = parseConfig(config(dir, rules, approvals));
  if (!parsed.ok) throw parsed.error;
  const from = Date.now();
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  await fake.frames.waitFor((f) => f.op === 2 && f.at >= from, 5_000, 'IDENTIFY');
  return started.warden;
}

const ANNOUNCE_RULE = { tool: 'message', match: { channel: `/^(#announcements|${ANN})$/` } };

const mark = () => fake.requests.records.length;
const after = (from: number) => (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from;
const postIn = (channel: string, from: number, pred: (b: any) => boolean, what: string, timeout = 10_000) =>
  fake.requests.waitFor((r) => after(from)(r) && r.method === 'POST' && r.path === `/channels/${channel}/messages` && pred(r.body), timeout, what);
const says = (text: string) => (b: any) => typeof b.content === 'string' && b.content.includes(text);
const buttons = (m: APIMessage) => (m.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);
const ask = (user: typeof alice, channelId: string, text: string) => fake.userMessage({ author: user, channelId, content: `<@${fake.bot.id}> ${text}` });
const announcementsSince = (from: number) => fake.requests.records.slice(from).filter((r) => r.method === 'POST' && r.path === `/channels/${ANN}/messages`);

async function cardIn(channel: string, from: number): Promise<APIMessage> {
  await postIn(channel, from, (b) => Array.isArray(b.components) && b.components.length > 0, 'approval card');
  return fake.botMessagesIn(channel).filter((m) => buttons(m).length > 0).at(-1)!;
}
const button = (card: APIMessage, decision: string) => buttons(card).find((id) => decodeApprovalAction(id)?.decision === decision)!;
const cardText = (id: string, channel: string) => JSON.stringify(fake.botMessagesIn(channel).find((m) => m.id === id));
const refusedPrivately = (token: string) => fake.requests.waitFor((r) => r.path.includes(token) && JSON.stringify(r.body).includes('not allowed to approve'), 8_000, 'private refusal');

describe('approvals.rules on Discord', () => {
  it('a message to #announcements raises a card under the rule, with its risk line, and posts only after the click', async () => {
    await start([{ ...ANNOUNCE_RULE, risk: 'posts to #announcements, which the whole company reads' }]);
    const from = mark();
    ask(alice, DEV, 'announce v1');
    const card = await cardIn(DEV, from);
    const shown = JSON.stringify(card.embeds);
    expect(shown).toContain('approvals.rules[0]');
    expect(shown).toContain('posts to #announcements, which the whole company reads');
    await postIn(DEV, from, says('waits for an approval'), 'the pending reply');
    expect(announcementsSince(from)).toHaveLength(0);

    fake.click({ message: card, customId: button(card, 'allow-once'), user: olga });
    await postIn(ANN, from, says('Release v1 is out'), 'the announcement');
    await postIn(DEV, from, says('The announcement is out.'), 'the agent told');
    expect(announcementsSince(from)).toHaveLength(1);

    // /tools --explain names the rule the call chain asked under.
    const explainAt = mark();
    ask(alice, DEV, '/tools --explain message');
    const explained = await postIn(DEV, explainAt, says('approval: approvals.rules[0]'), '/tools --explain');
    expect(explained.body.content).toContain('risk: posts to #announcements, which the whole company reads');
  }, 30_000);

  it('quorum 2 with a role: the requester is refused, one vote shows 1 of 2, the second runs it exactly once', async () => {
    await start([{ ...ANNOUNCE_RULE, approvers: [`role:${LEADS}`], quorum: 2 }]);
    const from = mark();
    ask(alice, DEV, 'announce v2');
    const card = await cardIn(DEV, from);
    // Two people allow a call once: no grant buttons.
    expect(buttons(card).map((b) => decodeApprovalAction(b)?.decision).filter(Boolean)).toEqual(['allow-once', 'deny']);

    // Alice is in the role, but she asked: her vote never counts.
    const own = fake.click({ message: card, customId: button(card, 'allow-once'), user: alice });
    await refusedPrivately(own.token);
    // The owner is not in the rule's approvers.
    const owner = fake.click({ message: card, customId: button(card, 'allow-once'), user: olga });
    await refusedPrivately(owner.token);

    const first = fake.click({ message: card, customId: button(card, 'allow-once'), user: bob });
    await fake.requests.waitFor((r) => r.path.includes(first.token) && JSON.stringify(r.body).includes('1 of 2 approved by'), 8_000, '1 of 2 on the card');
    expect(cardText(card.id, DEV)).toContain(`1 of 2 approved by <@${bob.id}>`);
    // The same person again changes nothing.
    fake.click({ message: card, customId: button(card, 'allow-once'), user: bob });
    await sleep(500);
    expect(announcementsSince(from)).toHaveLength(0);

    // Two clicks of the second approver at once: one run.
    fake.click({ message: card, customId: button(card, 'allow-once'), user: carol });
    fake.click({ message: card, customId: button(card, 'allow-once'), user: carol });
    await postIn(ANN, from, says('Release v2 is out'), 'the announcement');
    await postIn(DEV, from, says('The announcement is out.'), 'the agent told');
    await sleep(500);
    expect(announcementsSince(from)).toHaveLength(1);
    expect(cardText(card.id, DEV)).toContain(`Allowed once by <@${bob.id}>, <@${carol.id}>`);
  }, 40_000);

  it('"Deny with reason" opens a modal; the reason is on the card and in the model’s next request', async () => {
    await start([ANNOUNCE_RULE]);
    const from = mark();
    ask(alice, DEV, 'announce v3');
    const card = await cardIn(DEV, from);
    const reasonButton = buttons(card).find((b) => decodeReasonAction(b) !== undefined)!;
    const opened = fake.click({ message: card, customId: reasonButton, user: olga });
    const modal = await fake.modalFor(opened.id);
    expect(modal.title).toBe('Deny with reason');
    fake.submitModal({ message: card, customId: modal.custom_id, user: olga, values: { reason: 'freeze until Monday' } });
    await postIn(DEV, from, says('The announcement did not go out.'), 'the agent told');
    const followUp = model.requests.find((r) => lastUserText(r).includes('[Approval ') && lastUserText(r).includes('freeze until Monday'));
    expect(followUp).toBeDefined();
    expect(cardText(card.id, DEV)).toContain('freeze until Monday');
    expect(announcementsSince(from)).toHaveLength(0);
  }, 30_000);

  it('"Allow in this conversation" covers the same call in #dev, not in #ops', async () => {
    await start([ANNOUNCE_RULE]);
    const from = mark();
    ask(alice, DEV, 'announce v4');
    const card = await cardIn(DEV, from);
    fake.click({ message: card, customId: button(card, 'allow-conversation'), user: olga });
    await postIn(ANN, from, says('Release v4 is out'), 'the first announcement');
    await postIn(DEV, from, says('The announcement is out.'), 'the agent told');

    // The same call again here: the grant answers, no card.
    const again = mark();
    ask(alice, DEV, 'announce v4');
    await postIn(ANN, again, says('Release v4 is out'), 'the second announcement');
    await postIn(DEV, again, says('Announced right away.'), 'answered in the turn');

    // /approvals grants lists it here, and not in #ops.
    const listAt = mark();
    ask(alice, DEV, '/approvals grants');
    const listed = await postIn(DEV, listAt, says('Grants covering calls here (1)'), '/approvals grants');
    expect(listed.body.content).toContain('message');
    expect(listed.body.content).toContain('in this conversation');
    const opsAt = mark();
    ask(alice, OPS, '/approvals grants');
    await postIn(OPS, opsAt, says('No grants cover calls in this conversation.'), '/approvals grants in #ops');

    // In another channel the grant does not count: a card.
    const elsewhere = mark();
    ask(alice, OPS, 'announce v4');
    await cardIn(OPS, elsewhere);
    await sleep(300);
    expect(announcementsSince(elsewhere)).toHaveLength(0);
  }, 40_000);

  it('an undecided card escalates after escalateAfterSec to the named channel, linking the original, which says so', async () => {
    await start([{ ...ANNOUNCE_RULE, escalateAfterSec: 1, escalateTo: [`channel:${OPS}`] }]);
    const from = mark();
    ask(alice, DEV, 'announce v5');
    const card = await cardIn(DEV, from);
    const copy = await postIn(OPS, from, says('Escalated to'), 'the escalated copy', 8_000);
    expect(copy.body.content).toContain(`https://discord.com/channels/${GUILD}/${DEV}/${card.id}`);
    await fake.requests.waitFor((r) => after(from)(r) && r.method === 'PATCH' && r.path === `/channels/${DEV}/messages/${card.id}` && JSON.stringify(r.body).includes('Escalated to'), 8_000, 'the original says it escalated');
    // The copy decides like the original.
    const escalated = fake.botMessagesIn(OPS).filter((m) => buttons(m).length > 0).at(-1)!;
    fake.click({ message: escalated, customId: button(escalated, 'allow-once'), user: olga });
    await postIn(ANN, from, says('Release v5 is out'), 'the announcement');
  }, 30_000);
});

describe('approvals.rules on Slack', () => {
  const SECRET = 'rules-e2e-secret';
  const DEV_C = 'C0000DEV';
  const ANN_C = 'C0000ANN';
  const ALICE = 'U0000ALICE';
  const OLGA = 'U0000OLGA';
  let slack: SlackFake;
  beforeAll(async () => {
    slack = await startSlackFake({ channels: { [DEV_C]: 'dev', [ANN_C]: 'announcements' } });
  });
  afterAll(async () => {
    await slack?.close();
  });

  /** Asked to announce, the model posts to the Slack announcements channel. */
  const slackRespond = (r: FakeRequest): FakeReply => {
    const text = lastUserText(r);
    const last = messagesOf(r).at(-1)!;
    if (last.role !== 'tool' && !text.includes('[Approval ') && text.includes('announce')) return { kind: 'reply', toolCalls: [{ name: 'message', args: { channel: ANN_C, text: 'Release s1 is out' } }] };
    return respond(r);
  };

  it('a rule card posts only after the click; "Deny with reason" opens views.open and the reason reaches the model', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-rules-slack-'));
    const slackModel = await startFakeOpenAI({ respond: slackRespond });
    try {
      const parsed = parseConfig({
        owners: { slack: [OLGA] },
        approvals: { waitSec: 0, rules: [{ tool: 'message', match: { channel: `/^(#announcements|${ANN_C})$/` } }] },
        models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: slackModel.url } } },
        tools: { profile: 'messaging', message: { allowedTargets: [`slack:${ANN_C}`] } },
        channels: { slack: { botToken: 'xoxb-fake', signingSecret: SECRET, streaming: false, apiUrl: slack.apiUrl, port: 0, host: '127.0.0.1', channels: { '#dev': { tools: { allow: ['*'] } } } } },
        dataDir: path.join(dir, 'data'),
      });
      if (!parsed.ok) throw parsed.error;
      const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
      if (!started.ok) throw started.error;
      running.push(started.warden);
      const url = (started.warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;
      const say = (text: string) => slack.sendEvent(url, slack.envelope(slack.messageEvent({ user: ALICE, channel: DEV_C, text: `<@${slack.bot.userId}> ${text}`, type: 'app_mention' })), { secret: SECRET });
      const posted = (channel: string, pred: (body: any) => boolean, what: string) => slack.requests.waitFor((r) => r.path === '/api/chat.postMessage' && r.body.channel === channel && pred(r.body), 10_000, what);
      const cardNow = () => [...slack.messages.values()].filter((m) => m.channel === DEV_C && m.blocks?.some((b) => b.type === 'actions')).at(-1)! as SlackMessage;
      const buttonOf = (card: SlackMessage, actionId: string) => card.blocks!.find((b) => b.type === 'actions')!.elements.find((b: any) => b.action_id === actionId);

      // Allowed once: posted after the click, not before.
      await say('announce s1');
      await posted(DEV_C, (b) => Array.isArray(b.blocks) && JSON.stringify(b.blocks).includes('approvals.rules[0]'), 'the rule card');
      const card = cardNow();
      expect(JSON.stringify(card.blocks)).toContain('*Risk:* posts to a chat channel or person, or acts on messages there (react, pin, edit or delete its own, read)');
      await posted(DEV_C, (b) => String(b.text).includes('waits for an approval'), 'the pending reply');
      expect(slack.calls('chat.postMessage').filter((r) => r.body.channel === ANN_C)).toHaveLength(0);
      const allow = buttonOf(card, 'warden_approval_allow-once');
      await slack.sendAction(url, slack.blockActions({ message: card, actionId: allow.action_id, value: allow.value, user: OLGA }), { secret: SECRET });
      await posted(ANN_C, (b) => String(b.text).includes('Release s1 is out'), 'the announcement');

      // Denied with a reason, through the modal.
      await say('announce s2');
      await slack.requests.waitFor((r) => r.path === '/api/chat.postMessage' && r.body.channel === DEV_C && Array.isArray(r.body.blocks) && slack.calls('chat.postMessage').filter((x) => x.body.channel === DEV_C && Array.isArray(x.body.blocks)).length >= 2, 10_000, 'the second card');
      const second = cardNow();
      const reason = buttonOf(second, 'warden_approval_reason');
      await slack.sendAction(url, slack.blockActions({ message: second, actionId: reason.action_id, value: reason.value, user: OLGA }), { secret: SECRET });
      await slack.requests.waitFor((r) => r.path === '/api/views.open', 8_000, 'views.open');
      const view = slack.views.at(-1)!;
      expect(view.title.text).toBe('Deny with reason');
      await slack.sendAction(url, slack.viewSubmission({ view, user: OLGA, values: { reason: { reason: 'legal has not signed off' } } }), { secret: SECRET });
      await posted(DEV_C, (b) => String(b.text).includes('The announcement did not go out.'), 'the agent told');
      expect(slackModel.requests.some((r) => lastUserText(r).includes('legal has not signed off'))).toBe(true);
      const edited = slack.messages.get(`${second.channel}:${second.ts}`)!;
      expect(JSON.stringify(edited.blocks)).toContain('legal has not signed off');
      expect(slack.calls('chat.postMessage').filter((r) => r.body.channel === ANN_C)).toHaveLength(1);
    } finally {
      await Promise.all(running.splice(0).map((w) => w.stop()));
      await slackModel.close();
    }
  }, 40_000);
});
