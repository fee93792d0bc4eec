// Two `warden start` processes on one PostgreSQL database behind the Slack fake: one sender's
// messages land on both, alternately; the bucket in the store counts them together, so the 11th
// message in the minute gets the limit reply (once) and the model never sees it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../store-engines.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { ALICE, directMessage, sharedWorkspace, startInstance, stopInstance, until, type Instance } from './harness.js';

let fake: SlackFake;
let model: FakeModelServer;
const instances: Instance[] = [];

beforeAll(async () => {
  fake = await startSlackFake();
  model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: 'model answer' }) });
});
afterEach(async () => {
  await Promise.all(instances.splice(0).map(stopInstance));
});
afterAll(async () => {
  await Promise.all([fake?.close(), model?.close()]);
});

/** Messages the bot posted (or updated) in alice's DM whose text says `text`. */
const replies = (text: string) =>
  [...fake.calls('chat.postMessage'), ...fake.calls('chat.update')].filter((c) => c.body.channel === `D${ALICE.slice(1)}` && String(c.body.text).includes(text)).length;

describe('rate limits shared by two instances on one PostgreSQL', () => {
  it('10 messages pass across A and B; the 11th gets the limit reply once and no model call', async () => {
    const { url } = await freshStoreTarget('postgres');
    const workspace = sharedWorkspace();
    const extraYaml = ['rateLimit:', '  sender:', '    perMinute: 10', '    burst: 10'];
    const a = await startInstance('a', { fake, storeUrl: url!, workspace, leaseSec: 3, modelUrl: model.url, extraYaml });
    instances.push(a);
    const b = await startInstance('b', { fake, storeUrl: url!, workspace, leaseSec: 3, modelUrl: model.url, extraYaml });
    instances.push(b);
    for (let i = 1; i <= 10; i++) {
      expect((await directMessage(fake, i % 2 ? a : b, ALICE, `message ${i}`)).status).toBe(200);
      await until(() => model.requests.length >= i, 30_000, `model request ${i}`);
    }
    expect(model.requests.length).toBe(10);
    expect((await directMessage(fake, a, ALICE, 'message 11')).status).toBe(200);
    await until(() => replies('try again in') === 1, 30_000, 'the limit reply');
    expect((await directMessage(fake, b, ALICE, 'message 12')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    expect(replies('try again in')).toBe(1);
    expect(model.requests.length).toBe(10);
    // Counted on /metrics of the instance that refused.
    const scraped = await (await fetch(`${a.opsUrl}/metrics`)).text();
    expect(scraped).toMatch(/warden_rate_limited_total\{provider="slack",bucket="sender"\} 1/);
  }, 120_000);
});
