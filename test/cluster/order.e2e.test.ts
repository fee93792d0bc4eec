// Three `warden start` processes on one PostgreSQL database behind the Slack fake, each
// conversation's messages spread round-robin over them (as a load balancer does, so consecutive
// messages reach different instances): every message is answered exactly once, and each
// conversation's answers come in the order its messages were sent.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../store-engines.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { directMessage, sharedWorkspace, startInstance, stopInstance, until, type Instance } from './harness.js';

const CONVERSATIONS = 4;
const MESSAGES = 6;
const TAG = /msg-\d+-\d+/g;

let fake: SlackFake;
let model: FakeModelServer;
const instances: Instance[] = [];

beforeAll(async () => {
  fake = await startSlackFake();
  // Echoes the newest tag it was sent, after a pause long enough that a conversation's next
  // messages reach other instances (and the one running it) while its turn runs.
  model = await startFakeOpenAI({
    respond: (request) => {
      const users = (request.body.messages as Array<{ role: string }>).filter((m) => m.role === 'user');
      const tags = JSON.stringify(users.at(-1)).match(TAG) ?? ['none'];
      return { kind: 'reply', text: `echo ${tags.at(-1)}`, delayMs: 500 };
    },
  });
});
afterEach(async () => {
  await Promise.all(instances.splice(0).map(stopInstance));
});
afterAll(async () => {
  await model?.close();
  await fake?.close();
});

const user = (c: number) => `U0ORDER${c}`;
/** The answers in conversation `c`'s DM as they stand (a streamed answer is edited to its end), in the order they were posted. */
const answersIn = (c: number): string[] =>
  [...fake.messages.values()]
    .filter((m) => m.channel === `D${user(c).slice(1)}` && !m.blocks)
    .sort((x, y) => Number(x.ts) - Number(y.ts))
    .map((m) => String(m.text));

describe('three instances, round-robin delivery', () => {
  it('answers every message once, each conversation in the order it was sent', async () => {
    const { url } = await freshStoreTarget('postgres');
    const workspace = sharedWorkspace();
    for (const name of ['a', 'b', 'c']) instances.push(await startInstance(`order-${name}`, { fake, storeUrl: url!, workspace, leaseSec: 5, modelUrl: model.url, logLevel: 'debug' }));
    // Each conversation sends its messages one after another, message k to instance (c + k) mod 3;
    // the conversations run side by side. Slack acknowledges an event before its handler runs,
    // so "in order" means in the order messages reach the store: each message is sent once the
    // one before it took its place in the conversation's line (the instance's debug log says so).
    const placed = (instance: Instance, c: number) =>
      instance.output().split('\n').filter((l) => l.includes('took its place in the session line') && l.includes(`direct:${user(c).toLowerCase()}`)).length;
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
    await until(() => Array.from({ length: CONVERSATIONS }, (_, c) => answersIn(c).filter((t) => /^echo msg-\d+-\d+$/.test(t)).length).every((n) => n >= MESSAGES), 60_000, 'every answer');
    // A moment more: an answer given twice would arrive after the last first one.
    await new Promise((r) => setTimeout(r, 500));
    for (let c = 0; c < CONVERSATIONS; c++) {
      expect(answersIn(c)).toEqual(Array.from({ length: MESSAGES }, (_, k) => `echo msg-${c}-${k}`));
    }
  }, 120_000);
});
