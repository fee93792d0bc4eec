// Three `warden start` processes on one PostgreSQL database behind the Slack fake, each
// conversation's messages spread round-robin over them (as a load balancer does, so consecutive
// messages reach different instances): every message is answered exactly once, and each
// conversation's answers come in the order its messages were sent.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../store-engines.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { directMessage, expectEchoedInOrder, placedInLine, sharedWorkspace, startInstance, startTagEchoModel, stopInstance, until, type Instance } from './harness.js';

const CONVERSATIONS = 4;
const MESSAGES = 6;

let fake: SlackFake;
let model: FakeModelServer;
const instances: Instance[] = [];

beforeAll(async () => {
  fake = await startSlackFake();
  model = await startTagEchoModel();
});
afterEach(async () => {
  await Promise.all(instances.splice(0).map(stopInstance));
});
afterAll(async () => {
  await model?.close();
  await fake?.close();
});

const user = (c: number) => `U0ORDER${c}`;

describe('three instances, round-robin delivery', () => {
  it('answers every message once, each conversation in the order it was sent', async () => {
    const { url } = await freshStoreTarget('postgres');
    const workspace = sharedWorkspace();
    for (const name of ['a', 'b', 'c']) instances.push(await startInstance(`order-${name}`, { fake, storeUrl: url!, workspace, leaseSec: 5, modelUrl: model.url, logLevel: 'debug' }));
    // Each conversation sends its messages one after another, message k to instance (c + k) mod 3;
    // the conversations run side by side. Slack acknowledges an event before its handler runs,
    // so "in order" means in the order messages reach the store: each message is sent once the
    // one before it took its place in the conversation's line (the instance's debug log says so).
    const placed = (instance: Instance, c: number) => placedInLine(instance, user(c));
    await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, c) => {
        for (let k = 0; k < MESSAGES; k++) {
          const at = instances[(c + k) % instances.length]!;
          const before = placed(at, c);
          const response = await directMessage(fake, at, user(c), `msg-${c}-${k}`);
          expect(response.status).toBe(200);
          await until(() => placed(at, c) > before, 30_000, `msg-${c}-${k} placed`);
        }
      }),
    );
    await expectEchoedInOrder(fake, Array.from({ length: CONVERSATIONS }, (_, c) => user(c)), MESSAGES);
  }, 120_000);
});
