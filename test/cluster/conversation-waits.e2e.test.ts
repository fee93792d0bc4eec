// conversations_turn across `warden start` processes on one PostgreSQL database behind the Slack
// fake: the owner's call in #dev at instance A posts in #ops and waits; the reply in #ops reaches
// instance B, which answers the wait (one conditional write) and runs the follow-up turn in
// #dev's session — once, even when the same reply reaches A too. And a wait outlives its
// process: A stops, a new process takes the next reply.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openWardenStore } from '../../src/app/migrations.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { freshStoreTarget } from '../store-engines.js';
import { DEV, OLGA, SECRET, mention, sharedWorkspace, startInstance, stopInstance, until, type Instance } from './harness.js';

const OPS = 'C0000OPS';
const BOB = 'U0000BOB';

function respond(r: FakeRequest): FakeReply {
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1)!;
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  if (text.includes('[Reply ')) return { kind: 'reply', text: `Follow-up: ${text.slice(text.indexOf('[Reply'), 1200)}` };
  if (last.role === 'tool') return { kind: 'reply', text: `Tool said: ${text.slice(0, 600)}` };
  const ask = /ask ops (\w+)/.exec(text);
  if (ask) return { kind: 'reply', toolCalls: [{ name: 'conversations_turn', args: { provider: 'slack', channel: OPS, text: `Is deploy ${ask[1]} safe?`, timeoutSeconds: 600 } }] };
  return { kind: 'reply', text: 'noted' };
}

let fake: SlackFake;
let model: FakeModelServer;
const instances: Instance[] = [];

beforeAll(async () => {
  fake = await startSlackFake();
  model = await startFakeOpenAI({ respond });
});
afterEach(async () => {
  await Promise.all(instances.splice(0).map(stopInstance));
});
afterAll(async () => {
  await fake?.close();
  await model?.close();
});

/** A person's plain message in #ops (no mention: a reply need not address the bot), delivered to `instance`. */
const replyInOps = (instance: Instance, text: string) => fake.sendEvent(instance.eventsUrl, fake.envelope(fake.messageEvent({ user: BOB, channel: OPS, text })), { secret: SECRET });

/** The bot's messages in `channel` as they stand now (a streamed answer is edited to its end). */
const postsIn = (channel: string, includes: string) => [...fake.messages.values()].filter((m) => m.channel === channel && String(m.text ?? '').includes(includes));
const queuedIn = (instance: Instance) => instance.output().split('\n').filter((l) => l.includes('conversations_turn: follow-up queued')).length;

async function waitRows(url: string) {
  const store = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-check-')), url });
  if (!store.ok) throw new Error(store.error.message);
  try {
    return await store.store.db.all<{ state: string; ended_by: string | null; tool_call_id: string }>('SELECT state, ended_by, tool_call_id FROM conversation_waits ORDER BY created_at');
  } finally {
    await store.store.close();
  }
}

const start = (name: string, url: string, workspace: string) =>
  startInstance(name, { fake, storeUrl: url, workspace, leaseSec: 3, modelUrl: model.url, logLevel: 'info' });

describe('conversations_turn on two instances sharing PostgreSQL', () => {
  it('the wait made at A is answered by the reply reaching B, once; the follow-up runs in #dev', async () => {
    const { url } = await freshStoreTarget('postgres');
    const workspace = sharedWorkspace();
    const a = await start('a', url!, workspace);
    instances.push(a);
    const b = await start('b', url!, workspace);
    instances.push(b);

    expect((await mention(fake, a, OLGA, 'ask ops alpha')).status).toBe(200);
    await until(() => postsIn(OPS, 'Is deploy alpha safe?').length === 1, 30_000, 'the question in #ops');
    await until(async () => (await waitRows(url!)).length === 1, 10_000, 'the stored wait');

    expect((await replyInOps(b, 'alpha is green, go')).status).toBe(200);
    await until(() => postsIn(DEV, 'Follow-up: [Reply ').length >= 1, 30_000, 'the follow-up in #dev');
    const follow = postsIn(DEV, 'Follow-up: [Reply ');
    expect(String(follow[0]!.text)).toContain('alpha is green, go');
    expect(String(follow[0]!.text)).toContain('untrusted');

    // A later reply answers nothing more; a moment more so a second follow-up would show.
    expect((await replyInOps(b, 'also, lunch?')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(postsIn(DEV, 'Follow-up: [Reply ')).toHaveLength(1);
    expect(postsIn(DEV, 'lunch')).toHaveLength(0);

    // B ended it and queued the follow-up; A, where the call was made, did neither.
    expect(queuedIn(b)).toBe(1);
    expect(queuedIn(a)).toBe(0);
    expect(await waitRows(url!)).toMatchObject([{ state: 'answered' }]);

    // The same reply reaching both at once (a redelivery, a race): one of them answers, once.
    expect((await mention(fake, a, OLGA, 'ask ops gamma')).status).toBe(200);
    await until(() => postsIn(OPS, 'Is deploy gamma safe?').length === 1, 30_000, 'the second question in #ops');
    await until(async () => (await waitRows(url!)).length === 2, 10_000, 'the second stored wait');
    const statuses = await Promise.all([replyInOps(a, 'gamma looks fine'), replyInOps(b, 'gamma looks fine')]);
    expect(statuses.map((r) => r.status)).toEqual([200, 200]);
    await until(() => postsIn(DEV, 'gamma looks fine').length >= 1, 30_000, 'the second follow-up in #dev');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(postsIn(DEV, 'gamma looks fine')).toHaveLength(1);
    expect(queuedIn(a) + queuedIn(b)).toBe(2);
    expect((await waitRows(url!)).map((r) => r.state)).toEqual(['answered', 'answered']);
  }, 120_000);

  it('a wait outlives its process: A stops, a process started afterwards takes the reply', async () => {
    const { url } = await freshStoreTarget('postgres');
    const workspace = sharedWorkspace();
    const a = await start('a', url!, workspace);
    instances.push(a);

    const before = postsIn(DEV, 'Follow-up: [Reply ').length;
    expect((await mention(fake, a, OLGA, 'ask ops beta')).status).toBe(200);
    await until(() => postsIn(OPS, 'Is deploy beta safe?').length === 1, 30_000, 'the question in #ops');
    await until(async () => (await waitRows(url!)).length === 1, 10_000, 'the stored wait');
    await stopInstance(a);

    const c = await start('c', url!, workspace);
    instances.push(c);
    expect((await replyInOps(c, 'beta: hold off until 3pm')).status).toBe(200);
    await until(() => postsIn(DEV, 'Follow-up: [Reply ').length > before, 30_000, 'the follow-up in #dev');
    expect(String(postsIn(DEV, 'Follow-up: [Reply ').at(-1)!.text)).toContain('beta: hold off until 3pm');
    expect((await waitRows(url!)).map((r) => r.state)).toEqual(['answered']);
    expect(queuedIn(c)).toBe(1);
  }, 120_000);
});
