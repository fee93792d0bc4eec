// Socket Mode with several instances: each `warden start` opens its own Socket Mode connection,
// and Slack hands each event to one of the app's connections. Two instances on one PostgreSQL
// database, each conversation's messages alternating between the connections: every message is
// answered exactly once, and each conversation's answers come in the order its messages were
// sent (the session line of order.e2e.test.ts, reached over sockets instead of HTTP).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../store-engines.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { expectEchoedInOrder, placedInLine, sharedWorkspace, startInstance, startTagEchoModel, stopInstance, until, type Instance } from './harness.js';

const CONVERSATIONS = 3;
const MESSAGES = 6;

let fake: SlackFake;
let model: FakeModelServer;
const instances: Instance[] = [];

beforeAll(async () => {
  fake = await startSlackFake();
  model = await startTagEchoModel();
});
afterEach(async () => {
  // SIGTERM: each instance closes its socket before the fake goes.
  await Promise.all(instances.splice(0).map(stopInstance));
});
afterAll(async () => {
  await model?.close();
  await fake?.close();
});

const user = (c: number) => `U0SOCK${c}`;
/** How many of conversation `c`'s messages took their place in its line, on `instance`. */
const placed = (instance: Instance, c: number) => placedInLine(instance, user(c));

describe('two instances in Socket Mode', () => {
  it('each event reaches one connection; every message is answered once, each conversation in order', async () => {
    const { url } = await freshStoreTarget('postgres');
    const workspace = sharedWorkspace();
    for (const name of ['a', 'b']) instances.push(await startInstance(`socket-${name}`, { fake, storeUrl: url!, workspace, leaseSec: 5, modelUrl: model.url, logLevel: 'debug', slackMode: 'socket' }));
    await until(() => fake.socketClients === 2, 30_000, 'both connections');
    const delivered: number[] = [];
    // Message k of conversation c goes to connection (c + k) mod 2, so consecutive messages reach
    // different instances; the conversations run side by side. As over HTTP, the next message is
    // sent once the one before took its place in the conversation's line.
    await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, c) => {
        for (let k = 0; k < MESSAGES; k++) {
          const before = instances.reduce((n, i) => n + placed(i, c), 0);
          const event = fake.messageEvent({ user: user(c), channel: `D${user(c).slice(1)}`, text: `msg-${c}-${k}` });
          const ack = await fake.pushSocket('events_api', fake.envelope(event), 0, (c + k) % 2);
          delivered.push(ack.connection);
          await until(() => instances.reduce((n, i) => n + placed(i, c), 0) > before, 30_000, `msg-${c}-${k} placed`);
        }
      }),
    );
    // Both instances took messages of every conversation (each connection is a different instance).
    for (let c = 0; c < CONVERSATIONS; c++) for (const instance of instances) expect(placed(instance, c)).toBe(MESSAGES / 2);
    await expectEchoedInOrder(fake, Array.from({ length: CONVERSATIONS }, (_, c) => user(c)), MESSAGES);
    expect(delivered.filter((n) => n === 0)).toHaveLength(delivered.length / 2);
  }, 120_000);
});
