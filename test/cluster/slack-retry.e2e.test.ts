// Slack re-sends an event it thinks was not acknowledged (same event_id, `X-Slack-Retry-Num`),
// and behind a load balancer the retry may reach another instance than the first try: two
// `warden start` processes on one PostgreSQL database handle it once — one model turn, one
// reply — whether the retry comes after the first try or races it, and a channel mention that
// arrives as `message` at one instance and as `app_mention` at the other is one turn too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../store-engines.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { ALICE, DEV, SECRET, sharedWorkspace, startInstance, stopInstance, until, type Instance } from './harness.js';

let fake: SlackFake;
let model: FakeModelServer;
const instances: Instance[] = [];
let a: Instance;
let b: Instance;

beforeAll(async () => {
  fake = await startSlackFake();
  // Answers with the tag it was asked about, after a pause (a turn still running when the retry lands).
  model = await startFakeOpenAI({
    respond: (request) => {
      const tag = /retry-\w+/.exec(JSON.stringify(request.body.messages?.at(-1)))?.[0] ?? 'none';
      return { kind: 'reply', text: `answer ${tag}`, delayMs: 300 };
    },
  });
  const { url } = await freshStoreTarget('postgres');
  const workspace = sharedWorkspace();
  a = await startInstance('retry-a', { fake, storeUrl: url!, workspace, leaseSec: 5, modelUrl: model.url, logLevel: 'info' });
  instances.push(a);
  b = await startInstance('retry-b', { fake, storeUrl: url!, workspace, leaseSec: 5, modelUrl: model.url, logLevel: 'info' });
  instances.push(b);
}, 120_000);
afterAll(async () => {
  await Promise.all(instances.splice(0).map(stopInstance));
  await model?.close();
  await fake?.close();
});

const turnsAbout = (tag: string) => model.requests.filter((r) => JSON.stringify(r.body.messages?.at(-1)).includes(tag)).length;
const repliesAbout = (tag: string) => [...fake.messages.values()].filter((m) => String(m.text).includes(`answer ${tag}`)).length;
/** Settles: one answer is there, and a moment more passes for a second one to show up if it would. */
async function exactlyOnce(tag: string): Promise<void> {
  await until(() => repliesAbout(tag) >= 1, 30_000, `the answer about ${tag}`);
  await new Promise((r) => setTimeout(r, 1_500));
  expect(turnsAbout(tag)).toBe(1);
  expect(repliesAbout(tag)).toBe(1);
}

describe('a Slack retry landing on another instance', () => {
  it('delivered to A, retried to B: one model turn, one reply', async () => {
    const envelope = fake.envelope(fake.messageEvent({ user: ALICE, channel: `D${ALICE.slice(1)}`, text: 'about retry-after' }));
    expect((await fake.sendEvent(a.eventsUrl, envelope, { secret: SECRET })).status).toBe(200);
    await until(() => turnsAbout('retry-after') >= 1, 30_000, "A's turn");
    expect((await fake.sendEvent(b.eventsUrl, envelope, { secret: SECRET, retryNum: 1 })).status).toBe(200);
    expect((await fake.sendEvent(b.eventsUrl, envelope, { secret: SECRET, retryNum: 2 })).status).toBe(200);
    await exactlyOnce('retry-after');
    expect(b.output()).toContain('redelivered event skipped');
  }, 60_000);

  it('the retry racing the first try (both at once, one to each): one model turn, one reply', async () => {
    const envelope = fake.envelope(fake.messageEvent({ user: ALICE, channel: `D${ALICE.slice(1)}`, text: 'about retry-race' }));
    const responses = await Promise.all([fake.sendEvent(a.eventsUrl, envelope, { secret: SECRET }), fake.sendEvent(b.eventsUrl, envelope, { secret: SECRET, retryNum: 1 })]);
    expect(responses.map((r) => r.status)).toEqual([200, 200]);
    await exactlyOnce('retry-race');
  }, 60_000);

  it('a mention arriving as `message` at A and as `app_mention` at B: one turn', async () => {
    const message = fake.messageEvent({ user: ALICE, channel: DEV, text: `<@${fake.bot.userId}> about retry-twin` });
    const mention = { ...message, type: 'app_mention' } as Record<string, unknown>;
    delete mention.channel_type;
    await Promise.all([fake.sendEvent(a.eventsUrl, fake.envelope(message), { secret: SECRET }), fake.sendEvent(b.eventsUrl, fake.envelope(mention), { secret: SECRET })]);
    await exactlyOnce('retry-twin');
  }, 60_000);
});
