// Warden as `warden start` runs it, with the real Bolt adapter (HTTP receiver) against the
// loopback Slack fake: signed events in, Web API calls out.
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { startSlackFake, type SlackFake, type SlackMessage } from '../fakes/slack/index.js';

const SECRET = 'e2e-signing-secret';
const GENERAL = 'C0000GEN';
const DEV = 'C0000DEV';
const ALICE = 'U0000ALICE';
const BOB = 'U0000BOB';
const OLGA = 'U0000OLGA';

let fake: SlackFake;
const running: RunningWarden[] = [];

beforeAll(async () => {
  fake = await startSlackFake();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await fake?.close();
});

async function start(): Promise<{ warden: RunningWarden; url: string; dir: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-slack-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    owners: { slack: [OLGA] },
    tools: { profile: 'coding', exec: { host: 'gateway' } },
    channels: {
      slack: {
        botToken: 'xoxb-fake',
        signingSecret: SECRET,
        apiUrl: fake.apiUrl,
        port: 0,
        host: '127.0.0.1',
        channels: { '#general': { tools: { deny: ['exec', 'process'] } }, '#dev': { tools: { allow: ['*'] } } },
      },
    },
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {}, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  const slack = started.warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter;
  return { warden: started.warden, url: slack.eventsUrl!, dir };
}

const signed = { secret: SECRET };
/** A position in the fake's request log: only requests recorded after it count. */
const mark = () => fake.requests.records.length;
const after = (from: number) => (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from;

/** A user's message to the bot: a mention in a channel, a plain message in a DM. */
function post(url: string, user: string, channel: string, text: string, options: { retryNum?: number; eventId?: string } = {}) {
  const dm = channel.startsWith('D');
  const event = fake.messageEvent({ user, channel, text: dm ? text : `<@${fake.bot.userId}> ${text}`, type: dm ? 'message' : 'app_mention' });
  return fake.sendEvent(url, fake.envelope(event, options.eventId), { ...signed, ...(options.retryNum !== undefined ? { retryNum: options.retryNum } : {}) });
}

function reply(channel: string, from: number, pred: (text: string) => boolean = () => true): Promise<RecordedRequest> {
  return fake.requests.waitFor(
    (r) => after(from)(r) && r.path === '/api/chat.postMessage' && r.body.channel === channel && !r.body.blocks && pred(String(r.body.text ?? '')),
    8_000,
    `reply in ${channel}`,
  );
}

async function cardIn(channel: string): Promise<SlackMessage> {
  await fake.requests.waitFor((r) => r.path === '/api/chat.postMessage' && r.body.channel === channel && Array.isArray(r.body.blocks), 8_000, 'approval card');
  return [...fake.messages.values()].find((m) => m.channel === channel && m.blocks?.some((b) => b.type === 'actions'))!;
}

function click(message: SlackMessage, decision: string, user: string) {
  const button = (message.blocks!.find((b) => b.type === 'actions')?.elements ?? []).find((b: any) => b.action_id === `warden_approval_${decision}`);
  if (!button) throw new Error(`card has no ${decision} button`);
  return fake.blockActions({ message, actionId: button.action_id, value: button.value, user });
}

const runsIn = (dir: string) => (existsSync(path.join(dir, 'workspace', 'runs.log')) ? readFileSync(path.join(dir, 'workspace', 'runs.log'), 'utf8').split('\n').filter(Boolean).length : 0);

describe('Slack end to end', () => {
  it('#general has no exec; in #dev /exec raises a card, refuses a non-approver, runs once for the approver', async () => {
    const { url, dir } = await start();
    let from = mark();
    expect((await post(url, ALICE, GENERAL, '/tools')).status).toBe(200);
    const tools = await reply(GENERAL, from);
    expect(String(tools.body.text).split('\n')[0]).not.toMatch(/\bexec\b/);

    from = mark();
    await post(url, ALICE, GENERAL, '/exec echo hi');
    expect((await reply(GENERAL, from)).body.text).toMatch(/^exec is not available here/);

    await post(url, ALICE, DEV, '/exec echo run >> runs.log');
    const card = await cardIn(DEV);
    expect(JSON.stringify(card.blocks)).toContain('echo run &gt;&gt; runs.log');

    expect((await fake.sendAction(url, click(card, 'allow-once', BOB), signed)).status).toBe(200);
    const refusal = await fake.waitForCall('chat.postEphemeral', (b) => b.user === BOB);
    expect(refusal.body.text).toMatch(/not allowed/);
    await sleep(200);
    expect(runsIn(dir)).toBe(0);
    expect(fake.calls('chat.update')).toHaveLength(0);

    from = mark();
    expect((await fake.sendAction(url, click(card, 'allow-once', OLGA), signed)).status).toBe(200);
    const update = await fake.waitForCall('chat.update', (b) => JSON.stringify(b).includes(`Allowed once by <@${OLGA}>`));
    expect(JSON.stringify(update.body.blocks)).not.toContain('"actions"');
    await reply(DEV, from, (t) => t.includes('(no output)'));
    expect(runsIn(dir)).toBe(1);

    await fake.sendAction(url, click(card, 'allow-once', OLGA), signed);
    await fake.waitForCall('chat.postEphemeral', (b) => b.user === OLGA && /already resolved/.test(b.text));
    await sleep(200);
    expect(runsIn(dir)).toBe(1);
  });

  it('a request with a bad signature or a stale timestamp does nothing; a retried event is answered once', async () => {
    const { url } = await start();
    const from = mark();
    const event = fake.envelope(fake.messageEvent({ user: ALICE, channel: 'D0000ALICE', text: '/status' }));
    expect((await fake.sendEvent(url, event, { secret: 'wrong-secret' })).status).toBe(401);
    expect((await fake.sendEvent(url, event, { ...signed, timestamp: Math.floor(Date.now() / 1000) - 6 * 60 })).status).toBe(401);
    await sleep(300);
    expect(fake.requests.filter((r) => after(from)(r) && r.path === '/api/chat.postMessage')).toHaveLength(0);

    expect((await fake.sendEvent(url, event, signed)).status).toBe(200);
    expect((await fake.sendEvent(url, event, { ...signed, retryNum: 1 })).status).toBe(200);
    await reply('D0000ALICE', from);
    await sleep(300);
    expect(fake.requests.filter((r) => after(from)(r) && r.path === '/api/chat.postMessage')).toHaveLength(1);
  });

  it('DMs of two users are two sessions', async () => {
    const { url } = await start();
    let from = mark();
    await post(url, ALICE, 'D0000ALICE', '/status');
    const a = await reply('D0000ALICE', from);
    from = mark();
    await post(url, BOB, 'D0000BOB', '/status');
    const b = await reply('D0000BOB', from);
    expect(String(a.body.text)).toContain(`Session: agent:main:slack:direct:${ALICE.toLowerCase()}`);
    expect(String(b.body.text)).toContain(`Session: agent:main:slack:direct:${BOB.toLowerCase()}`);
  });
});

describe('Slack slash commands', () => {
  /** The app's answer at a command's response_url. */
  const response = (payload: Record<string, string>, pred: (body: any) => boolean = () => true) =>
    fake.requests.waitFor((r) => r.path === `/response/${payload.trigger_id}` && pred(r.body), 8_000, `response to ${payload.command} ${payload.text}`);

  it('/warden tools in #general is acknowledged at once and answers privately, without exec, like the typed command', async () => {
    const { url } = await start();
    const from = mark();
    await post(url, ALICE, GENERAL, '/tools');
    const typed = await reply(GENERAL, from);

    const payload = fake.slashCommand({ command: '/warden', text: 'tools', user: ALICE, channel: GENERAL });
    const acked = await fake.sendCommand(url, payload, signed);
    expect(acked.status).toBe(200);
    const answer = await response(payload);
    expect(answer.body.response_type).toBe('ephemeral');
    expect(String(answer.body.text).split('\n')[0]).not.toMatch(/\bexec\b/);
    expect(answer.body.text).toBe(typed.body.text);
    await sleep(100);
    expect(fake.requests.filter((r) => after(from)(r) && r.path === '/api/chat.postMessage')).toHaveLength(1);
  });

  it('/warden exec in #dev raises the approval card; once approved, the result answers in the channel', async () => {
    const { url, dir } = await start();
    const from = mark();
    const payload = fake.slashCommand({ command: '/warden', text: 'exec echo run >> runs.log', user: ALICE, channel: DEV });
    expect((await fake.sendCommand(url, payload, signed)).status).toBe(200);
    const posted = await fake.requests.waitFor((r) => after(from)(r) && r.path === '/api/chat.postMessage' && r.body.channel === DEV && Array.isArray(r.body.blocks), 8_000, 'approval card');
    const card = [...fake.messages.values()].find((m) => m.channel === DEV && m.text === posted.body.text && m.blocks?.some((b) => b.type === 'actions'))!;
    expect(JSON.stringify(card.blocks)).toContain('echo run &gt;&gt; runs.log');
    expect(fake.responses(payload.trigger_id!)).toHaveLength(0);
    expect(runsIn(dir)).toBe(0);

    await fake.sendAction(url, click(card, 'allow-once', OLGA), signed);
    const result = await response(payload, (b) => String(b.text).includes('(no output)'));
    expect(result.body.response_type).toBe('in_channel');
    expect(runsIn(dir)).toBe(1);
  });

  it('/warden-status names the sender\'s session and owner status; an unknown word gets the usage privately', async () => {
    const { url } = await start();
    const status = fake.slashCommand({ command: '/warden-status', text: '', user: OLGA, channel: DEV });
    await fake.sendCommand(url, status, signed);
    const text = String((await response(status)).body.text);
    expect(text).toContain(`Session: agent:main:slack:channel:${DEV.toLowerCase()}`);
    expect(text).toContain('You: owner');

    const from = mark();
    const unknown = fake.slashCommand({ command: '/warden', text: 'frobnicate', user: ALICE, channel: GENERAL });
    const acked = await fake.sendCommand(url, unknown, signed);
    expect(acked.status).toBe(200);
    expect(await acked.json()).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining('/warden help') });
    await sleep(200);
    expect(fake.requests.filter((r) => after(from)(r) && (r.path === '/api/chat.postMessage' || r.path.startsWith('/response/')))).toHaveLength(0);
  });

  it('a slash command with a bad signature does nothing', async () => {
    const { url } = await start();
    const from = mark();
    const payload = fake.slashCommand({ command: '/warden', text: 'status', user: ALICE, channel: GENERAL });
    expect((await fake.sendCommand(url, payload, { secret: 'wrong-secret' })).status).toBe(401);
    await sleep(300);
    expect(fake.requests.filter((r) => after(from)(r) && (r.path === '/api/chat.postMessage' || r.path.startsWith('/response/')))).toHaveLength(0);
  });
});
