// An instance killed outright (SIGKILL) in the middle of a model turn, with a message of the same
// conversation forwarded to it from the other instance and waiting behind the turn: the survivor
// takes both over once the dead instance's lease runs out and answers them, in order, once each;
// a message the dead instance had already answered is not run again; and no place of the dead
// instance is left in the conversation's line.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useTestStores } from '../store-engines.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { answersInDm, directMessage, placedInLine, SECRET, sharedWorkspace, startInstance, stopInstance, until, type Instance } from './harness.js';

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
/** A handle of the test's own on the instances' store, to look at their lines. */
const stores = useTestStores();
/** How many times the model was asked to answer each message (the newest tag of the turn). */
const asked = new Map<string, number>();
/** What the model was last shown for each message (the user turn, files' notes included). */
const shown = new Map<string, string>();

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
      shown.set(tag, text);
      return { kind: 'reply', text: `echo ${tag}`, delayMs: text.includes('slow') && times === 1 ? 60_000 : 100 };
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

describe('SIGKILL of an instance mid-turn', () => {
  it('the survivor runs the killed turn and the message forwarded behind it, in order, once each; nothing of the dead instance stays in line', async () => {
    const { target, open: openStore } = await stores.fresh('postgres');
    const url = target.url;
    const workspace = sharedWorkspace();
    const a = await startInstance('turn-a', { fake, storeUrl: url!, workspace, leaseSec: LEASE_SEC, modelUrl: model.url, logLevel: 'debug' });
    instances.push(a);
    const b = await startInstance('turn-b', { fake, storeUrl: url!, workspace, leaseSec: LEASE_SEC, modelUrl: model.url, logLevel: 'debug' });
    instances.push(b);
    const store = await openStore();
    const answers = () => answersInDm(fake, USER).filter((t) => t.startsWith('echo '));

    // Answered by A before the kill: never run again.
    await directMessage(fake, a, USER, 'msg-0');
    await until(() => answers().length === 1, 30_000, 'msg-0 answered');
    // Its lease released: msg-1's place finds the conversation idle and takes the lease.
    await until(async () => Number(await store.db.value('SELECT COUNT(*) FROM leases WHERE name = ?', [`session:agent:main:slack:direct:${USER.toLowerCase()}`])) === 0, 30_000, "msg-0's lease released");
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

    // msg-1 is in the transcript already, written with its place (which took the lease), while the model still has it.
    const userEntries = async () =>
      (
        await store.db.all<{ content: string }>("SELECT content FROM transcript_entries WHERE session_key = ? AND role = 'user' ORDER BY id", [
          `agent:main:slack:direct:${USER.toLowerCase()}`,
        ])
      ).map((r) => (r.content.match(TAG) ?? [])[0]);
    expect(await userEntries()).toEqual(['msg-0', 'msg-1']);

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
    // Each message is in the transcript once: msg-1, written with its place at A before the model
    // was asked, was not written again by B's rerun of it; msg-2, forwarded, was written by its turn.
    expect(await userEntries()).toEqual(['msg-0', 'msg-1', 'msg-2']);

    // The conversation goes on at B.
    await directMessage(fake, b, USER, 'msg-3');
    await until(() => answers().at(-1) === 'echo msg-3', 30_000, 'msg-3 answered (a streamed answer is edited to its end)');
    expect(answers()).toHaveLength(4);
  }, 120_000);

  it('messages with files waiting at the killed instance are answered by the survivor, which fetches the files again; a file the platform no longer serves is named to the model', async () => {
    const { target, open: openStore } = await stores.fresh('postgres');
    const url = target.url;
    const workspace = sharedWorkspace();
    const user = 'U0KILLFILE';
    const a = await startInstance('file-a', { fake, storeUrl: url!, workspace, leaseSec: LEASE_SEC, modelUrl: model.url, logLevel: 'debug' });
    instances.push(a);
    const b = await startInstance('file-b', { fake, storeUrl: url!, workspace, leaseSec: LEASE_SEC, modelUrl: model.url, logLevel: 'debug' });
    instances.push(b);
    const store = await openStore();
    const answers = () => answersInDm(fake, user).filter((t) => t.startsWith('echo '));
    const share = (to: Instance, text: string, files: Array<Record<string, unknown>>) =>
      fake.sendEvent(to.eventsUrl, fake.envelope(fake.messageEvent({ user, channel: `D${user.slice(1)}`, text, extra: { subtype: 'file_share', files } })), { secret: SECRET });

    // A's turn for msg-11 is under way ...
    await directMessage(fake, a, user, 'msg-11 slow');
    await until(() => asked.get('msg-11') === 1, 30_000, 'msg-11 reached the model');
    // ... msg-12, with a file, reaches A and waits behind it ...
    await share(a, 'msg-12 read the notes', [fake.hostFile({ name: 'notes.txt', mimetype: 'text/plain', data: Buffer.from('standup at 10\n') })]);
    await until(() => placedInLine(a, user) === 2, 30_000, 'msg-12 placed');
    // ... and msg-13, with two files, reaches B and is forwarded to A, the conversation's owner. Its
    // second file's URL no longer serves it (as a platform URL that expired).
    const gone = { ...fake.hostFile({ name: 'gone.txt', mimetype: 'text/plain', data: Buffer.from('x') }) };
    gone.url_private_download = `${String(gone.url_private_download)}-expired`;
    await share(b, 'msg-13 and these', [fake.hostFile({ name: 'plan.md', mimetype: 'text/markdown', data: Buffer.from('# plan\nship it\n') }), gone]);
    await until(() => placedInLine(b, user) === 1, 30_000, 'msg-13 placed');
    const aId = await store.db.value<string>('SELECT holder FROM leases WHERE name = ?', [`session:agent:main:slack:direct:${user.toLowerCase()}`]);
    await until(async () => (await store.db.value<number>('SELECT COUNT(*) FROM lease_queue WHERE holder = ?', [aId!])) === 3, 30_000, "three places in A's line");
    // The files travel as the platform described them, never as bytes.
    const payloads = await store.db.all<{ payload: string | null }>('SELECT payload FROM lease_queue WHERE holder = ? ORDER BY seq', [aId!]);
    expect(payloads.map((p) => (p.payload ? (JSON.parse(p.payload).route.files ?? []).map((f: { name: string }) => f.name) : null))).toEqual([[], ['notes.txt'], ['plan.md', 'gone.txt']]);
    expect(payloads.map((p) => p.payload).join('')).not.toContain('standup at 10');
    const fetchedBefore = fake.requests.records.filter((r) => r.path.startsWith('/files-pri/')).length;

    a.child.kill('SIGKILL');
    await a.child;

    await until(() => answers().length >= 3, BOUND_MS + SLACK_MS + 15_000, 'the taken-over messages answered').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n--- instance b ---\n${b.output().slice(-4000)}`);
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect(answers()).toEqual(['echo msg-11', 'echo msg-12', 'echo msg-13']);
    // The survivor fetched the files itself, with the bot token, from the platform's file host.
    const fetched = fake.requests.records.filter((r) => r.path.startsWith('/files-pri/')).slice(fetchedBefore);
    expect(fetched.map((r) => r.path.split('/').pop())).toEqual(['notes.txt', 'plan.md', 'gone.txt-expired']);
    for (const r of fetched) expect(r.headers.authorization).toBe('Bearer xoxb-fake');
    // The model was shown the files as for a message that reached the survivor, and why one could not be taken.
    expect(shown.get('msg-12')).toMatch(/\[file notes\.txt \(14 bytes, text\/plain\) saved as inbox\//);
    expect(shown.get('msg-13')).toMatch(/\[file plan\.md \(15 bytes, text\/markdown\) saved as inbox\//);
    expect(shown.get('msg-13')).toContain('[file gone.txt could not be fetched: the file host answered 404]');
    const inbox = readdirSync(path.join(workspace, 'inbox'));
    expect(inbox.map((f) => readFileSync(path.join(workspace, 'inbox', f), 'utf8')).sort()).toEqual(['# plan\nship it\n', 'standup at 10\n']);
    expect(await store.db.value<number>('SELECT COUNT(*) FROM lease_queue')).toBe(0);
  }, 120_000);
});
