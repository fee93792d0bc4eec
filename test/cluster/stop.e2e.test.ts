// `/stop` that reaches an instance other than the one running the conversation's turn (a load
// balancer spread the messages): the running instance stops the turn, and the conversation's
// next message is answered at once rather than after the stopped turn would have ended.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../store-engines.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { directMessage, sharedWorkspace, startInstance, stopInstance, until, type Instance } from './harness.js';

let fake: SlackFake;
let model: FakeModelServer;
const instances: Instance[] = [];

beforeAll(async () => {
  fake = await startSlackFake();
  // A turn asked to be slow waits a minute for its answer; anything else is answered at once.
  model = await startFakeOpenAI({
    respond: (request) => (JSON.stringify(request.body.messages?.at(-1)).includes('slow') ? { kind: 'reply', text: 'slow answer', delayMs: 60_000 } : { kind: 'reply', text: 'quick answer' }),
  });
});
afterEach(async () => {
  await Promise.all(instances.splice(0).map(stopInstance));
});
afterAll(async () => {
  await model?.close();
  await fake?.close();
});

const USER = 'U0STOPPER';
const dmTexts = (): string[] =>
  [...fake.messages.values()]
    .filter((m) => m.channel === `D${USER.slice(1)}`)
    .sort((x, y) => Number(x.ts) - Number(y.ts))
    .map((m) => String(m.text));

describe('/stop across instances', () => {
  it('stops the turn another instance runs; the next message is answered without waiting for it', async () => {
    const { url } = await freshStoreTarget('postgres');
    const workspace = sharedWorkspace();
    const a = await startInstance('stop-a', { fake, storeUrl: url!, workspace, leaseSec: 15, modelUrl: model.url });
    instances.push(a);
    const b = await startInstance('stop-b', { fake, storeUrl: url!, workspace, leaseSec: 15, modelUrl: model.url });
    instances.push(b);
    await directMessage(fake, a, USER, 'a slow question');
    await until(() => model.requests.some((r) => JSON.stringify(r.body).includes('slow')), 30_000, 'the slow turn at A');
    await directMessage(fake, b, USER, '/stop');
    await until(() => dmTexts().find((t) => t.includes('Stopped the running turn') || t.includes('Nothing is running')), 20_000, "B's answer to /stop");
    expect(dmTexts().some((t) => t.includes('Stopped the running turn'))).toBe(true);
    const started = Date.now();
    await directMessage(fake, b, USER, 'and now?');
    await until(() => dmTexts().some((t) => t.includes('quick answer')), 20_000, 'the next answer');
    // Well under the slow turn's minute: A gave the conversation up when it stopped.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(dmTexts().some((t) => t.includes('slow answer'))).toBe(false);
  }, 120_000);
});
