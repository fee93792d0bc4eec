// ask_user end to end on the Discord fake with the real discord.js adapter and the scripted
// model: the question is posted in the conversation with a button per option; someone else's
// click is refused privately; the requester's click is the tool's result (the model's next
// request carries it). With no inline wait, the turn ends at once (`pending`): the conversation
// answers other messages meanwhile, and the outcome — "no answer" at the timeout, or a late
// free-text answer from the "Other…" form — reaches the model in a follow-up turn. Questions live
// in the store: after a restart, a click on the old prompt is taken by the new process and the
// follow-up comes; a question that expired while Warden was down gets its "no answer" at start.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASK_BUTTON_PREFIX, ASK_FIELD, askModalId, decodeAskId } from '../../adapters/common/ask-user-prompt.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';

const QUESTION = { id: 'deploy_target', header: 'Target', question: 'Where should it deploy?', options: [{ label: 'Staging (Recommended)' }, { label: 'Production' }] };

function respond(r: FakeRequest): FakeReply {
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1)!;
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  if (last.role === 'tool') return { kind: 'reply', text: `Tool said: ${text.slice(0, 600)}` };
  if (text.includes('[Question ')) return { kind: 'reply', text: `Follow-up: ${text.slice(text.indexOf('[Question'), 600)}` };
  if (text.includes('deploy it')) return { kind: 'reply', toolCalls: [{ name: 'ask_user', args: { questions: [QUESTION], timeoutSeconds: 60 } }] };
  return { kind: 'reply', text: 'plain reply' };
}

const GUILD = '300000000000000001';
const GENERAL = '300000000000000002';
const DEV = '300000000000000003';
const bob = fakeUser('400000000000000002', 'bob');
const mallory = fakeUser('400000000000000007', 'mallory');

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
});
afterAll(async () => {
  await model?.close();
});

async function start(fake: DiscordFake, waitSec: number, askUserTimeoutMs: number, dir = mkdtempSync(path.join(tmpdir(), 'warden-ask-e2e-'))): Promise<RunningWarden> {
  const parsed = parseConfig({
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'messaging' },
    approvals: { waitSec },
    dataDir: path.join(dir, 'data'),
    channels: { discord: { token: 'test-token', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { dev: {} } } } } },
  });
  if (!parsed.ok) throw parsed.error;
  const from = Date.now();
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test', PATH: process.env.PATH }, shutdownGraceMs: 300, askUserTimeoutMs });
  if (!started.ok) throw started.error;
  await fake.frames.waitFor((f) => f.op === 2 && f.at >= from, 10_000, 'IDENTIFY');
  return started.warden;
}

const buttons = (m: APIMessage) => (m.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => ({ id: b.custom_id as string, label: b.label as string }));
const lastToolMessage = () => JSON.stringify((model.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'tool').at(-1)?.content ?? '');

function harness(get: () => DiscordFake) {
  const mark = () => get().requests.records.length;
  const postedAfter = (from: number, includes: string, label: string) =>
    get().requests.waitFor((r: RecordedRequest) => get().requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${DEV}/messages` && String(r.body?.content ?? '').includes(includes), 20_000, label);
  const say = (text: string) => get().userMessage({ author: bob, channelId: DEV, content: `<@${get().bot.id}> ${text}` });
  return { mark, postedAfter, say };
}

describe('ask_user on Discord, answered within the wait', () => {
  let fake: DiscordFake;
  let warden: RunningWarden;
  beforeAll(async () => {
    fake = await startDiscordFake();
    warden = await start(fake, 20, 60_000);
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  it('posts buttons; a stranger is refused privately; the requester’s choice is the tool result', async () => {
    const { mark, postedAfter, say } = harness(() => fake);
    const from = mark();
    say('please deploy it');
    const posted = await fake.requests.waitFor((r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${DEV}/messages` && Array.isArray(r.body?.components), 20_000, 'question');
    expect(String(posted.body.content)).toContain(`<@${bob.id}>`);
    expect(String(posted.body.content)).toContain('Where should it deploy?');
    const prompt = fake.botMessagesIn(DEV).at(-1)!;
    const bs = buttons(prompt);
    expect(bs.map((b) => b.label)).toEqual(['Staging (Recommended)', 'Production', 'Other…']);

    // Mallory's click: a private refusal; nothing recorded.
    const stranger = fake.click({ message: prompt, customId: bs[1]!.id, user: mallory });
    const refusal = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(stranger.token), 10_000, 'refusal');
    expect(refusal.body.type).toBe(4);
    expect(refusal.body.data.flags & 64).toBe(64);
    expect(refusal.body.data.content).toContain('Only the person the assistant asked');
    // Mallory cannot open the free-text form either.
    const strangerOther = fake.click({ message: prompt, customId: bs[2]!.id, user: mallory });
    const refusal2 = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(strangerOther.token), 10_000, 'refusal of the form');
    expect(refusal2.body.type).toBe(4);
    expect(fake.modals).toHaveLength(0);

    // Bob's own buttons, clicked from anywhere but #dev (a copy replayed in #general, his DM with
    // the bot, a forged form submitted in #general): refused privately, nothing recorded.
    const asked = decodeAskId(bs[1]!.id, ASK_BUTTON_PREFIX)!;
    for (const channel_id of [GENERAL, fake.dmChannelOf(bob.id)]) {
      const elsewhere = fake.click({ message: { ...prompt, channel_id }, customId: bs[1]!.id, user: bob });
      const refused = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(elsewhere.token), 10_000, 'refusal elsewhere');
      expect(refused.body.type).toBe(4);
      expect(refused.body.data.flags & 64).toBe(64);
      expect(refused.body.data.content).toContain('only be answered in the conversation where it was asked');
    }
    const forged = fake.submitModal({ customId: askModalId(asked.id, 0), user: bob, values: { [ASK_FIELD]: 'Production' }, channelId: GENERAL });
    const forgedRefusal = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(forged.token), 10_000, 'forged form refusal');
    expect(forgedRefusal.body.data.content).toContain('only be answered in the conversation where it was asked');

    // Bob's click: the buttons give way to the answer, and the model reads it as the result.
    const after = mark();
    const click = fake.click({ message: prompt, customId: bs[1]!.id, user: bob });
    const updated = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(click.token), 10_000, 'update');
    expect(updated.body.type).toBe(7);
    expect(updated.body.data.components).toEqual([]);
    expect(updated.body.data.content).toContain('Answered: Production');
    const reply = await postedAfter(after, 'Tool said:', 'the turn goes on');
    expect(String(reply.body.content)).toContain('answered');
    expect(lastToolMessage()).toContain('\\"deploy_target\\": [\\n');
    expect(lastToolMessage()).toContain('Production');

    // A second click (even Bob's): the question is closed.
    const again = fake.click({ message: prompt, customId: bs[0]!.id, user: bob });
    const closed = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(again.token), 10_000, 'closed');
    expect(closed.body.data.content).toContain('no longer open');
  });
});

describe('ask_user on Discord, past the wait', () => {
  let fake: DiscordFake;
  let warden: RunningWarden;
  beforeAll(async () => {
    fake = await startDiscordFake();
    warden = await start(fake, 0, 4_000);
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  it('frees the conversation at once and answers "no answer" at the timeout, in a follow-up turn', async () => {
    const { mark, postedAfter, say } = harness(() => fake);
    const from = mark();
    const asked = Date.now();
    say('please deploy it');
    const pending = await postedAfter(from, 'Tool said:', 'pending');
    expect(String(pending.body.content)).toContain('pending');
    // The conversation is free while the question waits.
    const free = mark();
    say('what time is it?');
    await postedAfter(free, 'plain reply', 'a reply while the question is open');
    expect(Date.now() - asked).toBeLessThan(4_000);
    const followUp = await postedAfter(from, 'Follow-up:', 'no answer');
    expect(String(followUp.body.content)).toContain('no_answer');
    expect(Date.now() - asked).toBeGreaterThanOrEqual(3_900);
  });

  it('a late free-text answer from the form reaches the agent in a follow-up turn', async () => {
    const { mark, postedAfter, say } = harness(() => fake);
    const from = mark();
    say('please deploy it');
    await postedAfter(from, 'Tool said:', 'pending');
    const prompt = fake.botMessagesIn(DEV).filter((m) => (m.components ?? []).length > 0).at(-1)!;
    const other = buttons(prompt).find((b) => b.label === 'Other…')!;
    const click = fake.click({ message: prompt, customId: other.id, user: bob });
    const form = await fake.modalFor(click.id);
    expect(form.custom_id).toMatch(/^warden-ask-modal:/);
    const submit = fake.submitModal({ message: prompt, customId: form.custom_id, user: bob, values: { answer: 'the canary pool' } });
    const ack = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(submit.token), 10_000, 'form answer');
    expect(ack.body.data.flags & 64).toBe(64);
    const followUp = await postedAfter(from, 'Follow-up:', 'answered late');
    expect(String(followUp.body.content)).toContain('the canary pool');
  });
});

describe('ask_user on Discord across a restart', () => {
  let fake: DiscordFake;
  let warden: RunningWarden | undefined;
  beforeAll(async () => {
    fake = await startDiscordFake();
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  it('a click on a question asked before the restart is taken by the new process, and the follow-up comes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-ask-restart-'));
    warden = await start(fake, 0, 60_000, dir);
    const { mark, postedAfter, say } = harness(() => fake);
    const from = mark();
    say('please deploy it');
    await postedAfter(from, 'Tool said:', 'pending');
    const prompt = fake.botMessagesIn(DEV).filter((m) => (m.components ?? []).length > 0).at(-1)!;
    await warden.stop();
    warden = await start(fake, 0, 60_000, dir);
    // Someone else's click is still refused by the new process.
    const stranger = fake.click({ message: prompt, customId: buttons(prompt)[0]!.id, user: mallory });
    const refusal = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(stranger.token), 10_000, 'refusal after the restart');
    expect(refusal.body.data.content).toContain('Only the person the assistant asked');
    const after = mark();
    const click = fake.click({ message: prompt, customId: buttons(prompt)[1]!.id, user: bob });
    const updated = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(click.token), 10_000, 'update after the restart');
    expect(updated.body.data.content).toContain('Answered: Production');
    const followUp = await postedAfter(after, 'Follow-up:', 'answered after the restart');
    expect(String(followUp.body.content)).toContain('Production');
    await warden.stop();
    warden = undefined;
  });

  it('a question that expired while Warden was down gets its "no answer" follow-up at the next start', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-ask-restart-'));
    // Long enough for the ask → stop below on a loaded machine: a deadline that passes while the
    // first Warden still runs is its own timer's to end (then nothing is left for the restart).
    const deadlineMs = 6_000;
    warden = await start(fake, 0, deadlineMs, dir);
    const { mark, postedAfter, say } = harness(() => fake);
    const from = mark();
    say('please deploy it');
    await postedAfter(from, 'Tool said:', 'pending');
    // The question was asked before its pending result came back: its deadline is before this + deadlineMs.
    const seen = Date.now();
    await warden.stop();
    const early = fake.requests.records.slice(from).filter((r: RecordedRequest) => r.method === 'POST' && String(r.body?.content ?? '').includes('Follow-up:'));
    expect(early, 'the deadline passed while the first Warden still ran').toHaveLength(0);
    await new Promise((r) => setTimeout(r, Math.max(0, seen + deadlineMs + 300 - Date.now())));
    const after = mark();
    warden = await start(fake, 0, deadlineMs, dir);
    const followUp = await postedAfter(after, 'Follow-up:', 'no answer after the restart');
    expect(String(followUp.body.content)).toContain('no_answer');
  });
});
