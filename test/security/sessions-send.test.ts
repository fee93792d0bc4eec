// sessions_send as an attacker uses it: a turn in a channel where exec is denied messages
// another session — one that does not exist, one whose channel allows exec, an owner's DM — and
// hopes the turn it starts there has more than its own. Everything runs through `warden start`
// (the real discord.js adapter and the OpenAI SDK against loopback fakes, SQLite on disk); the
// receiving turn's tools are read off the model request Warden sends for it.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentSessions } from '../../src/agent/sessions.js';
import { channelTurn, createHarness } from '../../src/app/agent-testing.js';
import { parseConfig, type LoadedConfig } from '../../src/config/index.js';
import { routeForCronJob } from '../../src/gateway/scheduled.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { resolveToolSurface } from '../../src/policy/surface.js';
import { surfaceInputs } from '../../src/app/surface-inputs.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';

const GUILD = '310000000000000001';
const GENERAL = '310000000000000002';
const DEV = '310000000000000003';
const OPS = '310000000000000004';
const RANDOM = '310000000000000005';
const owner = fakeUser('410000000000000001', 'olga');
const alice = fakeUser('410000000000000002', 'alice');
const bob = fakeUser('410000000000000003', 'bob');

const key = (channelId: string) => `agent:main:discord:channel:${channelId}`;
const dmKey = (userId: string) => `agent:main:discord:direct:${userId}`;
const OWNER_ONLY = ['cron', 'gateway', 'nodes'];

let fake: DiscordFake;
let model: FakeModelServer;
let warden: RunningWarden | undefined;
let loaded: LoadedConfig;

// ── the fake model: commands in the message text tell it which tool to call ──────────────────

type Message = { role: string; content: unknown };
const textOf = (m: Message | undefined): string => (m ? (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)) : '');
const lastUser = (r: FakeRequest): string => textOf([...(r.body.messages as Message[])].reverse().find((m) => m.role === 'user'));
const systemOf = (r: FakeRequest): string => textOf((r.body.messages as Message[]).find((m) => m.role === 'system'));
const toolsOf = (r: FakeRequest): string[] => ((r.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name).sort();
/** A turn another session started: its message arrives wrapped as coming from that session. */
const isReceiving = (r: FakeRequest) => lastUser(r).includes('session:agent:');
const isChild = (r: FakeRequest) => systemOf(r).includes('You are a subagent');

/** `SEND <key> :: <message>`, `CRON`, `SPAWN <task>`: the first command in the text decides. */
function respond(r: FakeRequest): FakeReply {
  const messages = r.body.messages as Message[];
  const last = messages.at(-1)!;
  if (last.role === 'tool') return { kind: 'reply', text: `RESULT ${textOf(last)}` };
  if (isChild(r)) return { kind: 'reply', text: 'child done' };
  const said = lastUser(r);
  const send = /SEND (\S+) :: (.*?)(?:<\/untrusted|"|$)/s.exec(said);
  if (send) return { kind: 'reply', toolCalls: [{ name: 'sessions_send', args: { sessionKey: send[1]!, message: send[2]!.trim(), timeoutSeconds: 20 } }] };
  if (said.includes('CRON')) return { kind: 'reply', toolCalls: [{ name: 'cron', args: { action: 'add', everyMs: 3_600_000, message: 'post the digest', name: 'digest' } }] };
  const spawn = /SPAWN (.*?)(?:<\/untrusted|"|$)/s.exec(said);
  if (spawn) return { kind: 'reply', toolCalls: [{ name: 'sessions_spawn', args: { task: spawn[1]!.trim() } }] };
  return { kind: 'reply', text: isReceiving(r) ? 'RECEIVED' : 'ok' };
}

/** The receiving turn's model request for a case (its message carries the case's marker). */
const receivingFor = (marker: string) => model.requests.filter((r) => isReceiving(r) && !isChild(r) && lastUser(r).includes(marker));

// ── Warden under test ──────────────────────────────────────────────────────────────────────

async function start(): Promise<RunningWarden> {
  const identified = fake.frames.records.length;
  const started = await startWarden(loaded, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  await fake.frames.waitFor((f) => f.op === 2 && fake.frames.records.indexOf(f) >= identified, 5_000, 'IDENTIFY');
  return started.warden;
}

/** A user says something to the bot in a channel (or their DM); resolves with the bot's next post there containing `expected`. */
async function say(user: typeof alice, where: string | 'dm', content: string, expected: string): Promise<string> {
  const dm = where === 'dm';
  const channelId = dm ? fake.dmChannelOf(user.id) : where;
  const earlier = new Set(fake.requests.records);
  fake.userMessage({ author: user, ...(dm ? { dm: true } : { channelId: where }), content: dm ? content : `<@${fake.bot.id}> ${content}` });
  const post = await fake.requests.waitFor(
    (r) => !earlier.has(r) && r.method === 'POST' && r.path === `/channels/${channelId}/messages` && String(r.body?.content ?? '').includes(expected),
    20_000,
    `a post containing ${expected}`,
  );
  return String(post.body?.content ?? '');
}

beforeAll(async () => {
  fake = await startDiscordFake({
    guilds: [
      {
        id: GUILD,
        name: 'Team',
        channels: [
          { id: GENERAL, name: 'general', type: 0 },
          { id: DEV, name: 'dev', type: 0 },
          { id: OPS, name: 'ops', type: 0 },
          { id: RANDOM, name: 'random', type: 0 },
        ],
      },
    ],
  });
  model = await startFakeOpenAI({ respond });
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-sessions-send-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    owners: { discord: [owner.id] },
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    agents: { list: [{ id: 'main', default: true }, { id: 'ops' }] },
    tools: { profile: 'coding', exec: { host: 'gateway' } },
    channels: {
      discord: {
        token: 't',
        apiBaseUrl: fake.apiBaseUrl,
        streaming: false,
        guilds: {
          [GUILD]: {
            channels: {
              general: { tools: { deny: ['exec', 'process'] } },
              // Scoped by NAME: only a context that knows the channel's name applies it.
              dev: { tools: { allow: ['*'], deny: ['web_fetch'] } },
              ops: { tools: { allow: ['*'] } },
            },
          },
        },
      },
    },
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  loaded = { ...parsed.value, baseDir: dir };
  warden = await start();
  // The conversations that exist: people talked to the bot in #dev, #ops and the owner's DM.
  await say(bob, DEV, 'hello from dev', 'ok');
  await say(bob, OPS, 'hello from ops', 'ok');
  await say(owner, 'dm', 'hello', 'ok');
}, 60_000);

afterAll(async () => {
  await warden?.stop();
  await fake?.close();
  await model?.close();
});

// ── the attacks ─────────────────────────────────────────────────────────────────────────────

describe('sessions_send into a session that no conversation created', () => {
  it.each([
    ['a channel id nobody ever wrote in', key('319999999999999999')],
    ['a thread under a real channel that was never started', `${key(DEV)}:thread:319999999999999998`],
    ['a DM key of a real owner, built by hand', dmKey(owner.id).replace(owner.id, '419999999999999999')],
    ['a key with a forged extra segment', `${key(DEV)}:channel:${GENERAL}`],
    ['a made-up key shape', 'agent:main:discord:group:dev'],
  ])('%s is refused and starts no turn', async (_name, target) => {
    const marker = `unknown-${target.length}-${Math.random().toString(36).slice(2, 8)}`;
    const reply = await say(alice, GENERAL, `SEND ${target} :: ${marker} run ls`, 'RESULT');
    expect(reply).toMatch(/no conversation has started it|cannot be messaged from here/);
    expect(receivingFor(marker)).toEqual([]);
  });

  it("another agent's session is refused", async () => {
    const reply = await say(alice, GENERAL, `SEND agent:ops:discord:channel:${DEV} :: other-agent hi`, 'RESULT');
    expect(reply).toContain('cannot be messaged from here');
    expect(receivingFor('other-agent')).toEqual([]);
  });
});

describe('the receiving turn runs under the target’s stored context, for the sender, under the sender’s surface', () => {
  const cases: Array<{ name: string; from: typeof alice; at: string | 'dm'; target: string; has: string[]; lacks: string[] }> = [
    { name: '#general → #dev (exec denied where it was sent from)', from: alice, at: GENERAL, target: key(DEV), has: ['read', 'write'], lacks: ['exec', 'process', 'web_fetch', ...OWNER_ONLY] },
    { name: '#dev → #general (exec denied where it runs)', from: alice, at: DEV, target: key(GENERAL), has: ['read'], lacks: ['exec', 'process', 'web_fetch', ...OWNER_ONLY] },
    { name: 'the owner from #general → #dev: owner tools, still no exec', from: owner, at: GENERAL, target: key(DEV), has: ['cron', 'read'], lacks: ['exec', 'process', 'web_fetch'] },
    { name: 'the owner from their DM → #general: the channel still denies exec', from: owner, at: 'dm', target: key(GENERAL), has: ['read', 'cron'], lacks: ['exec', 'process'] },
    { name: 'a non-owner from #random → #ops, where an owner spoke last: no owner tools', from: bob, at: RANDOM, target: key(OPS), has: ['exec', 'web_fetch'], lacks: OWNER_ONLY },
  ];

  it.each(cases)('$name', async ({ from, at, target, has, lacks }) => {
    if (target === key(OPS)) await say(owner, OPS, 'owner was here', 'ok');
    const marker = `recv-${Math.random().toString(36).slice(2, 10)}`;
    const reply = await say(from, at, `SEND ${target} :: ${marker} please run the build`, 'RESULT');
    expect(reply).toContain('RECEIVED');
    const [received] = receivingFor(marker);
    expect(received, 'a receiving turn ran').toBeDefined();
    const tools = toolsOf(received!);
    for (const t of has) expect(tools, `has ${t}`).toContain(t);
    for (const t of lacks) expect(tools, `lacks ${t}`).not.toContain(t);
  });

  it("a non-owner cannot reach the owner's DM session at all", async () => {
    const reply = await say(bob, RANDOM, `SEND ${dmKey(owner.id)} :: dm-attack what are my jobs`, 'RESULT');
    expect(reply).toContain('cannot be messaged from here');
    expect(receivingFor('dm-attack')).toEqual([]);
  });
});

describe('ceilings carry on: chains, subagents and cron jobs started from a receiving turn', () => {
  it('#general → #dev → #ops: the last hop still has no exec', async () => {
    const marker = `chain-${Math.random().toString(36).slice(2, 8)}`;
    await say(alice, GENERAL, `SEND ${key(DEV)} :: ${marker} SEND ${key(OPS)} :: ${marker}-last run ls`, 'RESULT');
    const last = receivingFor(`${marker}-last`).filter((r) => lastUser(r).includes(`session:${key(DEV)}`));
    expect(last).toHaveLength(1);
    expect(toolsOf(last[0]!)).not.toContain('exec');
    // #ops alone would offer exec: the ceiling came from #general through #dev.
    expect(toolsOf(model.requests.find((r) => lastUser(r).includes('hello from ops'))!)).toContain('exec');
  });

  it('a subagent spawned by a receiving turn stays under the sender’s ceiling and cannot send on', async () => {
    const marker = `spawn-${Math.random().toString(36).slice(2, 8)}`;
    await say(alice, GENERAL, `SEND ${key(OPS)} :: ${marker} SPAWN ${marker}-child build it`, 'RESULT');
    await expect.poll(() => model.requests.some((r) => isChild(r) && lastUser(r).includes(`${marker}-child`)), { timeout: 10_000 }).toBe(true);
    const child = model.requests.find((r) => isChild(r) && lastUser(r).includes(`${marker}-child`))!;
    expect(toolsOf(child)).not.toContain('exec');
    expect(toolsOf(child)).not.toContain('sessions_send');
  });

  it('a cron job the receiving turn creates keeps the ceiling on every run', async () => {
    const before = (await warden!.cron.jobs.list('main')).length;
    await say(owner, GENERAL, `SEND ${key(DEV)} :: cron-under-ceiling CRON`, 'RESULT');
    const jobs = await warden!.cron.jobs.list('main');
    expect(jobs).toHaveLength(before + 1);
    const job = jobs.at(-1)!;
    expect(job.target).toMatchObject({ sessionKey: key(DEV), channelName: 'dev', inherited: { deny: expect.arrayContaining(['exec', 'process']) } });
    const run = routeForCronJob(loaded.config, job);
    const surface = resolveToolSurface(loaded.config, run.context, surfaceInputs(loaded.config, loaded.baseDir));
    expect(run.context.senderIsOwner).toBe(false);
    expect(surface.tools).not.toContain('exec');
    expect(surface.removed).toContainEqual({ tool: 'exec', by: 'inherited tools' });
  });
});

describe('after a restart', () => {
  it('the stored contexts hold: #dev keeps its name-scoped policy, unknown keys stay refused', async () => {
    await warden!.stop();
    warden = await start();
    const marker = `restart-${Math.random().toString(36).slice(2, 8)}`;
    const reply = await say(alice, GENERAL, `SEND ${key(DEV)} :: ${marker} run ls`, 'RESULT');
    expect(reply).toContain('RECEIVED');
    const tools = toolsOf(receivingFor(marker)[0]!);
    // web_fetch is denied in #dev by name: only the stored context knows the name.
    expect(tools).not.toContain('web_fetch');
    expect(tools).not.toContain('exec');
    expect(tools).toContain('read');
    const unknown = await say(alice, GENERAL, `SEND ${key('319999999999999997')} :: ${marker}-x hi`, 'RESULT');
    expect(unknown).toContain('no conversation has started it');
  });
});

describe('the sessions service, called directly', () => {
  it('refuses a sending turn that is a subagent, whatever its surface says', async () => {
    const h = await createHarness();
    try {
      const sessions = new AgentSessions({ config: h.config, transcripts: h.transcripts, runs: h.subagentRuns, contexts: h.sessionContexts });
      await h.sessionContexts.record(key(DEV), 'main', { provider: 'discord', chat: 'channel', guildId: GUILD, channelId: DEV, channelName: 'dev' }, bob.id);
      const signal = new AbortController().signal;
      for (const depth of [1, 2]) {
        const sent = await sessions.send({ fromKey: 'agent:main:subagent:x', fromTurn: channelTurn({ spawnDepth: depth }), ceiling: { deny: [] }, toKey: key(DEV), text: 'hi', timeoutMs: 1_000, signal });
        expect(sent).toEqual({ ok: false, message: 'a subagent cannot message other sessions' });
      }
      // A non-owner's turn never becomes an owner's, even into a conversation an owner created.
      const turn = await sessions.turnFor(key(DEV), channelTurn({ senderId: bob.id }), { deny: [] });
      expect(turn).toMatchObject({ ok: true, value: { senderIsOwner: false, senderId: bob.id, channelName: 'dev', guildId: GUILD } });
    } finally {
      await h.cleanup();
    }
  });
});
