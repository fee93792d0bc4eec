// ask_user end to end on the Slack fake with the real Bolt adapter and the scripted model: the
// question is a message with a button per option; someone else's click gets an ephemeral
// refusal; the requester's click is the tool's result. With no inline wait the conversation is
// free at once, and the timeout's "no answer" (or a late answer from the "Other…" form) comes in
// a follow-up turn. Questions live in the store: after a restart, the form on the old question is
// opened and taken by the new process, and the follow-up comes.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { startSlackFake, type SlackFake, type SlackMessage } from '../fakes/slack/index.js';

const QUESTION = { id: 'deploy_target', header: 'Target', question: 'Where should it deploy?', options: [{ label: 'Staging (Recommended)' }, { label: 'Production' }] };

function respond(r: FakeRequest): FakeReply {
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1)!;
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  if (last.role === 'tool') return { kind: 'reply', text: `Tool said: ${text.slice(0, 600)}` };
  if (text.includes('[Question ')) return { kind: 'reply', text: `Follow-up: ${text.slice(text.indexOf('[Question'), 600)}` };
  if (text.includes('deploy it')) return { kind: 'reply', toolCalls: [{ name: 'ask_user', args: { questions: [QUESTION] } }] };
  return { kind: 'reply', text: 'plain reply' };
}

const SECRET = 'e2e-signing-secret';
const DEV = 'C0000DEV';
const BOB = 'U0000BOB';
const MALLORY = 'U0000MAL';

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
});
afterAll(async () => {
  await model?.close();
});

async function start(fake: SlackFake, waitSec: number, askUserTimeoutMs: number, dir = mkdtempSync(path.join(tmpdir(), 'warden-ask-slack-'))): Promise<{ warden: RunningWarden; url: string }> {
  const parsed = parseConfig({
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'messaging' },
    approvals: { waitSec },
    dataDir: path.join(dir, 'data'),
    channels: { slack: { botToken: 'xoxb-fake', signingSecret: SECRET, apiUrl: fake.apiUrl, port: 0, host: '127.0.0.1', streaming: false, channels: { '#dev': {} } } },
  });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test', PATH: process.env.PATH }, shutdownGraceMs: 300, askUserTimeoutMs });
  if (!started.ok) throw started.error;
  return { warden: started.warden, url: (started.warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl! };
}

const blocksOf = (body: any) => (typeof body.blocks === 'string' ? JSON.parse(body.blocks) : body.blocks);
const lastToolMessage = () => JSON.stringify((model.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'tool').at(-1)?.content ?? '');

function harness(get: () => { fake: SlackFake; url: string }) {
  const mark = () => get().fake.requests.records.length;
  const say = (text: string) => {
    const { fake, url } = get();
    return fake.sendEvent(url, fake.envelope(fake.messageEvent({ user: BOB, channel: DEV, text: `<@${fake.bot.userId}> ${text}`, type: 'app_mention' })), { secret: SECRET });
  };
  const postedAfter = (from: number, includes: string, label: string) => {
    const { fake } = get();
    return fake.requests.waitFor((r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.path === '/api/chat.postMessage' && String(r.body?.text ?? '').includes(includes), 20_000, label);
  };
  const question = async (from: number): Promise<{ message: SlackMessage; buttons: Array<{ action_id: string; value: string; text: { text: string } }> }> => {
    const { fake } = get();
    const posted = await fake.requests.waitFor((r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.path === '/api/chat.postMessage' && String(r.body?.text ?? '').includes('the assistant asks'), 20_000, 'question');
    const blocks = blocksOf(posted.body);
    const ts = [...fake.messages.values()].filter((m) => m.channel === DEV && m.text === String(posted.body.text)).at(-1)?.ts ?? '1.000001';
    return { message: { channel: DEV, ts, text: String(posted.body.text), blocks }, buttons: blocks.find((b: any) => b.type === 'actions').elements };
  };
  return { mark, say, postedAfter, question };
}

describe('ask_user on Slack, answered within the wait', () => {
  let fake: SlackFake;
  let warden: RunningWarden;
  let url: string;
  beforeAll(async () => {
    fake = await startSlackFake();
    ({ warden, url } = await start(fake, 20, 60_000));
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  it('posts buttons; a stranger is refused privately; the requester’s choice is the tool result', async () => {
    const { mark, postedAfter, say, question } = harness(() => ({ fake, url }));
    const from = mark();
    await say('please deploy it');
    const { message, buttons } = await question(from);
    expect(message.text).toContain(`<@${BOB}>`);
    expect(buttons.map((b) => b.text.text)).toEqual(['Staging (Recommended)', 'Production', 'Other…']);

    await fake.sendAction(url, fake.blockActions({ message, actionId: buttons[1]!.action_id, value: buttons[1]!.value, user: MALLORY }), { secret: SECRET });
    await fake.waitForCall('chat.postEphemeral', (b) => b.user === MALLORY && String(b.text).includes('Only the person the assistant asked'));
    await fake.sendAction(url, fake.blockActions({ message, actionId: buttons[2]!.action_id, value: buttons[2]!.value, user: MALLORY }), { secret: SECRET });
    expect(fake.views).toHaveLength(0);

    // Bob's own button in a payload whose channel is another, or whose message sits in a thread:
    // an ephemeral refusal where the click came from; nothing recorded.
    await fake.sendAction(url, fake.blockActions({ message: { ...message, channel: 'C0000GEN' }, actionId: buttons[1]!.action_id, value: buttons[1]!.value, user: BOB }), { secret: SECRET });
    await fake.waitForCall('chat.postEphemeral', (b) => b.user === BOB && b.channel === 'C0000GEN' && String(b.text).includes('only be answered in the conversation where it was asked'));
    const threaded = fake.blockActions({ message, actionId: buttons[1]!.action_id, value: buttons[1]!.value, user: BOB }) as { message: Record<string, unknown> };
    threaded.message.thread_ts = '1700000000.000100';
    const refusals = () => fake.requests.records.filter((r: RecordedRequest) => r.path === '/api/chat.postEphemeral' && String(r.body?.text).includes('only be answered in the conversation')).length;
    await fake.sendAction(url, threaded as Record<string, unknown>, { secret: SECRET });
    await fake.waitForCall('chat.postEphemeral', () => refusals() === 2);
    // The "Other…" form is not even opened from elsewhere.
    await fake.sendAction(url, fake.blockActions({ message: { ...message, channel: 'C0000GEN' }, actionId: buttons[2]!.action_id, value: buttons[2]!.value, user: BOB }), { secret: SECRET });
    await fake.waitForCall('chat.postEphemeral', () => refusals() === 3);
    expect(fake.views).toHaveLength(0);

    const after = mark();
    await fake.sendAction(url, fake.blockActions({ message, actionId: buttons[1]!.action_id, value: buttons[1]!.value, user: BOB }), { secret: SECRET });
    const updated = await fake.waitForCall('chat.update', (b) => String(b.text).includes('Answered: Production'));
    expect(JSON.stringify(blocksOf(updated.body))).not.toContain('"actions"');
    const reply = await postedAfter(after, 'Tool said:', 'the turn goes on');
    expect(String(reply.body.text)).toContain('answered');
    expect(lastToolMessage()).toContain('deploy_target');
    expect(lastToolMessage()).toContain('Production');
  });
});

describe('ask_user on Slack, past the wait', () => {
  let fake: SlackFake;
  let warden: RunningWarden;
  let url: string;
  beforeAll(async () => {
    fake = await startSlackFake();
    ({ warden, url } = await start(fake, 0, 4_000));
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  it('frees the conversation at once and answers "no answer" at the timeout, in a follow-up turn', async () => {
    const { mark, postedAfter, say } = harness(() => ({ fake, url }));
    const from = mark();
    const asked = Date.now();
    await say('please deploy it');
    expect(String((await postedAfter(from, 'Tool said:', 'pending')).body.text)).toContain('pending');
    const free = mark();
    await say('what time is it?');
    await postedAfter(free, 'plain reply', 'a reply while the question is open');
    expect(Date.now() - asked).toBeLessThan(4_000);
    const followUp = await postedAfter(from, 'Follow-up:', 'no answer');
    expect(String(followUp.body.text)).toContain('no_answer');
    expect(Date.now() - asked).toBeGreaterThanOrEqual(3_900);
  });

  it('a late free-text answer from the form reaches the agent in a follow-up turn', async () => {
    const { mark, postedAfter, say, question } = harness(() => ({ fake, url }));
    const from = mark();
    await say('please deploy it');
    const { message, buttons } = await question(from);
    await postedAfter(from, 'Tool said:', 'pending');
    const other = buttons.find((b) => b.text.text === 'Other…')!;
    await fake.sendAction(url, fake.blockActions({ message, actionId: other.action_id, value: other.value, user: BOB }), { secret: SECRET });
    await fake.waitForCall('views.open');
    const view = fake.views.at(-1)!;
    expect(view.callback_id).toMatch(/^warden-ask-modal:/);
    const response = await fake.sendAction(url, fake.viewSubmission({ viewId: view.id, user: BOB, values: { ask: { answer: 'the canary pool' } } }), { secret: SECRET });
    expect(JSON.stringify(await response.json())).toContain('Answered: the canary pool');
    const followUp = await postedAfter(from, 'Follow-up:', 'answered late');
    expect(String(followUp.body.text)).toContain('the canary pool');
  });
});

describe('ask_user on Slack across a restart', () => {
  let fake: SlackFake;
  let running: { warden: RunningWarden; url: string } | undefined;
  beforeAll(async () => {
    fake = await startSlackFake();
  });
  afterAll(async () => {
    await running?.warden.stop();
    await fake?.close();
  });

  it('the form on a question asked before the restart is opened and taken by the new process; the follow-up comes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-ask-slack-restart-'));
    running = await start(fake, 0, 60_000, dir);
    const { mark, postedAfter, say, question } = harness(() => ({ fake, url: running!.url }));
    const from = mark();
    await say('please deploy it');
    const { message, buttons } = await question(from);
    await postedAfter(from, 'Tool said:', 'pending');
    await running.warden.stop();
    running = await start(fake, 0, 60_000, dir);
    const other = buttons.find((b) => b.text.text === 'Other…')!;
    await fake.sendAction(running.url, fake.blockActions({ message, actionId: other.action_id, value: other.value, user: BOB }), { secret: SECRET });
    await fake.waitForCall('views.open');
    const view = fake.views.at(-1)!;
    const after = mark();
    const response = await fake.sendAction(running.url, fake.viewSubmission({ viewId: view.id, user: BOB, values: { ask: { answer: 'the blue pool' } } }), { secret: SECRET });
    expect(JSON.stringify(await response.json())).toContain('Answered: the blue pool');
    const followUp = await postedAfter(after, 'Follow-up:', 'answered after the restart');
    expect(String(followUp.body.text)).toContain('the blue pool');
  });
});
