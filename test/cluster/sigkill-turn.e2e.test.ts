// An instance killed outright (SIGKILL) in the middle of a model turn, with a message of the same
// conversation forwarded to it from the other instance and waiting behind the turn: the survivor
// takes both over once the dead instance's lease runs out and answers them, in order, once each;
// a message the dead instance had already answered is not run again; and no place of the dead
// instance is left in the conversation's line.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/store.js';
import { freshStoreTarget } from '../store-engines.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { answersInDm, directMessage, placedInLine, sharedWorkspace, startInstance, stopInstance, until, type Instance } from './harness.js';

const LEASE_SEC = 2;
/** The dead instance's heartbeat lease, then the survivor's sweep (a third of the lease); its session lease runs out within the same span. */
const BOUND_MS = LEASE_SEC * 1000 + (LEASE_SEC * 1000) / 3;
/** Slack for a loaded two-core machine: process scheduling, the fake's HTTP round trips, the re-run turn. */
const SLACK_MS = 8000;
const USER = 'U0KILLTURN';
const TAG = /msg-\d+/g;

let fake: SlackFake;
let model: FakeModelServer;
const instances: Instance[] = [];
let store: Store | undefined;
/** How many times the model was asked to answer each message (the newest tag of the turn). */
const asked = new Map<string, number>();

beforeAll(async () => {
  fake = await startSlackFake();
  // Echoes the newest tag; the first turn that sees `slow` takes long enough to be killed in.
  model = await startFakeOpenAI({
    respond: (request) => {
      const users = (request.body.messages as Array<{ role: string }>).filter((m) => m.role === 'user');
      const text = JSON.stringify(users.at(-1));
      const tag = text.match(TAG)?.at(-1) ?? 'none';
      const times = (asked.get(tag) ?? 0) + 1;
      asked.set(tag, times);
      return { kind: 'reply', text: `echo ${tag}`, delayMs: text.includes('slow') && times === 1 ? 60_000 : 100 };
    },
  });
});
afterEach(async () => {
  await Promise.all(instances.splice(0).map(stopInstance));
  await store?.close();
  store = undefined;
});
afterAll(async () => {
  await model?.close();
  await fake?.close();
});

describe('SIGKILL of an instance mid-turn', () => {
  it('the survivor runs the killed turn and the message forwarded behind it, in order, once each; nothing of the dead instance stays in line', async () => {
    const { url, dataDir } = await freshStoreTarget('postgres');
    const workspace = sharedWorkspace();
    const a = await startInstance('turn-a', { fake, storeUrl: url!, workspace, leaseSec: LEASE_SEC, modelUrl: model.url, logLevel: 'debug' });
    instances.push(a);
    const b = await startInstance('turn-b', { fake, storeUrl: url!, workspace, leaseSec: LEASE_SEC, modelUrl: model.url, logLevel: 'debug' });
    instances.push(b);
    const opened = await openWardenStore({ dataDir, url });
    if (!opened.ok) throw new Error(opened.error.message);
    store = opened.store;
    const answers = () => answersInDm(fake, USER).filter((t) => t.startsWith('echo '));

    // Answered by A before the kill: never run again.
    await directMessage(fake, a, USER, 'msg-0');
    await until(() => answers().length === 1, 30_000, 'msg-0 answered');
    // A's turn for msg-1 is under way (the model has it) ...
    await directMessage(fake, a, USER, 'msg-1 slow');
    await until(() => asked.get('msg-1') === 1, 30_000, 'msg-1 reached the model');
    // ... and msg-2, which reached B, is forwarded to A, the conversation's owner while it is busy.
    await directMessage(fake, b, USER, 'msg-2');
    await until(() => placedInLine(b, USER) === 1, 30_000, 'msg-2 placed');
    expect(b.output()).toMatch(/"forwardedTo":"[^"]+".*direct:u0killturn|direct:u0killturn.*"forwardedTo":"[^"]+"/);
    const aId = await store.db.value<string>('SELECT holder FROM leases WHERE name = ?', [`session:agent:main:slack:direct:${USER.toLowerCase()}`]);
    expect(aId).toBeDefined();
    expect(await store.db.value<number>('SELECT COUNT(*) FROM lease_queue WHERE holder = ?', [aId!])).toBe(2);

    a.child.kill('SIGKILL');
    await a.child;
    const killedAt = Date.now();

    // B takes both over and answers them in order, each once.
    await until(() => answers().length >= 3, BOUND_MS + SLACK_MS + 10_000, 'the taken-over messages answered').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n--- instance b ---\n${b.output().slice(-4000)}`);
    });
    const tookMs = Date.now() - killedAt;
    console.info(`sigkill mid-turn: both messages answered ${tookMs} ms after the kill (bound ${BOUND_MS} ms + the turns)`);
    expect(tookMs).toBeLessThan(BOUND_MS + SLACK_MS);
    await new Promise((r) => setTimeout(r, 1000));
    expect(answers()).toEqual(['echo msg-0', 'echo msg-1', 'echo msg-2']);
    // The model ran msg-1 twice (the killed turn and the survivor's): at least once is the promise for a turn.
    expect(Object.fromEntries(asked)).toEqual({ 'msg-0': 1, 'msg-1': 2, 'msg-2': 1 });
    // Nothing of A's stays in the line; B's places went with their turns.
    expect(await store.db.value<number>('SELECT COUNT(*) FROM lease_queue')).toBe(0);

    // The conversation goes on at B.
    await directMessage(fake, b, USER, 'msg-3');
    await until(() => answers().at(-1) === 'echo msg-3', 30_000, 'msg-3 answered (a streamed answer is edited to its end)');
    expect(answers()).toHaveLength(4);
  }, 120_000);
});
