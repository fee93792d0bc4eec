// Loop detection per run, end to end: real discord.js on the loopback Discord fake, the model a
// loopback OpenAI-compatible fake driven by the real SDK, exec running the real `git status`
// through the whole call chain. People's commands never count; a model loop is blocked within
// its run and, when it keeps going, the global breaker stops the run; a subagent's calls and
// the turn its results start count toward the run that spawned it.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';

const GUILD = '300000000000000001';
const DEV = '300000000000000003';
const olga = fakeUser('400000000000000009', 'olga');

let fake: DiscordFake;
let model: FakeModelServer;
let warden: RunningWarden;

type Msg = { role: string; content: unknown };
const messagesOf = (r: FakeRequest) => r.body.messages as Msg[];
const textOf = (m: Msg | undefined): string => (m === undefined ? '' : typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
/** The messages of the current turn: everything after its last user message. */
function thisTurn(r: FakeRequest): { ask: string; tools: string[] } {
  const messages = messagesOf(r);
  let i = messages.length - 1;
  while (i >= 0 && messages[i]!.role !== 'user') i--;
  return { ask: textOf(messages[i]), tools: messages.slice(i + 1).filter((m) => m.role === 'tool').map(textOf) };
}
const GIT_STATUS = { name: 'exec', args: { command: 'git status' } };
const reply = (text: string): FakeReply => ({ kind: 'reply', text });
const calls = (n: number, call = GIT_STATUS): FakeReply => ({ kind: 'reply', toolCalls: Array.from({ length: n }, () => call) });

/** The model: what each kind of turn does, decided by the message that started it. */
function respond(r: FakeRequest): FakeReply {
  const { ask, tools } = thisTurn(r);
  const lastTool = tools.at(-1) ?? '';
  if (ask.includes('FIVE')) return tools.length < 5 ? calls(1) : reply('five checks done');
  // Like a stubborn model, it tries once more after the breaker before giving up.
  if (ask.includes('LOOP')) return tools.filter((t) => t.includes('No further tool calls run in this run')).length >= 2 ? reply('The breaker stopped me.') : calls(1);
  if (ask.includes('CHILD')) return lastTool.includes('CRITICAL') ? reply('child blocked') : calls(1);
  if (ask.includes('DELEGATE')) {
    if (tools.length === 0) return calls(12);
    if (tools.length === 12) return { kind: 'reply', toolCalls: [{ name: 'sessions_spawn', args: { task: 'CHILD: keep checking git status', label: 'checker' } }, { name: 'sessions_yield', args: {} }] };
    return reply('waiting for the checker');
  }
  if (ask.includes('subagents have finished')) return tools.length === 0 ? calls(1) : reply(`after the child: ${lastTool.includes('CRITICAL') ? 'blocked' : 'ran'}`);
  return reply('ok');
}

beforeAll(async () => {
  fake = await startDiscordFake();
  model = await startFakeOpenAI({ respond });
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-loops-e2e-'));
  const workspace = path.join(dir, 'workspace');
  mkdirSync(workspace);
  execFileSync('git', ['init', '-q', '-b', 'main', workspace]);
  const parsed = parseConfig({
    owners: { discord: [olga.id] },
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    agents: { defaults: { maxToolRounds: 40 } },
    tools: { profile: 'coding', exec: { allowlist: [{ pattern: '/usr/bin/git', argPattern: 'status*', trustRepoConfig: true }] } },
    channels: { discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { dev: { tools: { allow: ['*'] } } } } } } },
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  warden = started.warden;
  await fake.frames.waitFor((f) => f.op === 2, 5_000, 'IDENTIFY');
});
afterAll(async () => {
  await warden?.stop();
  await fake?.close();
  await model?.close();
});

const mark = () => fake.requests.records.length;
/**
 * The bot's post that ends a flow. A flow here is up to 21 sandboxed `git status` runs and as
 * many model calls: ~5 s on a quiet machine, past 20 s beside a second suite. The wait is bounded
 * by the test's own limit instead (a post that never comes still fails the test).
 */
const botPost = (text: string | RegExp, from: number) =>
  fake.requests.waitFor(
    (r) =>
      fake.requests.records.indexOf(r) >= from &&
      r.method === 'POST' &&
      r.path === `/channels/${DEV}/messages` &&
      (typeof text === 'string' ? String(r.body?.content ?? '').includes(text) : text.test(String(r.body?.content ?? ''))),
    90_000,
    String(text),
  );
/** The tool results the model was shown, in order, for turns started by `ask`. */
const toolResults = (ask: string) => {
  const last = model.requests.filter((r) => thisTurn(r).ask.includes(ask)).at(-1);
  return last ? thisTurn(last).tools : [];
};

describe('loop detection per run', () => {
  it('thirty typed /exec git status over several turns are never blocked, nor are the model’s own checks in between', async () => {
    for (let turn = 0; turn < 3; turn++) {
      let from = mark();
      fake.userMessage({ author: olga, channelId: DEV, content: `<@${fake.bot.id}> FIVE checks, round ${turn}` });
      await botPost('five checks done', from);
      expect(toolResults(`FIVE checks, round ${turn}`).join('\n')).not.toMatch(/CRITICAL|Tool-loop warning/);
      for (let i = 0; i < 10; i++) {
        from = mark();
        fake.userMessage({ author: olga, channelId: DEV, content: '/exec git status' });
        const answer = String((await botPost(/```/, from)).body.content);
        expect(answer).toContain('No commits yet');
        expect(answer).not.toMatch(/CRITICAL|WARNING|Tool-loop/);
      }
    }
  });

  it('a model loop is blocked within its run, and the breaker stops the run when it keeps going', async () => {
    const from = mark();
    fake.userMessage({ author: olga, channelId: DEV, content: `<@${fake.bot.id}> LOOP on git status` });
    await botPost('The breaker stopped me.', from);
    const results = toolResults('LOOP on git status');
    expect(results).toHaveLength(32);
    expect(results.slice(0, 20).every((t) => t.includes('No commits yet'))).toBe(true);
    expect(results[10]).toContain('[System note: Tool-loop warning after 10 repeated calls.');
    // 21st to 30th: blocked, each one recorded; the 31st reaches the breaker.
    // Each blocked retry counts: 20, 21, … 29.
    expect(results.slice(20, 30).map((t) => /CRITICAL: Called exec with identical outcomes (\d+) times\./.exec(t)?.[1])).toEqual(Array.from({ length: 10 }, (_, i) => String(20 + i)));
    expect(results[30]).toContain(
      'CRITICAL: exec repeated identical no-progress outcomes 30 times. Session execution blocked by global circuit breaker to prevent runaway loops. No further tool calls run in this run',
    );
    // Tripped: the run's next call is refused before it is looked at.
    expect(results[31]).toContain('CRITICAL: this run was stopped by the global circuit breaker after exec repeated identical no-progress outcomes 30 times');
    // The next message is a new run: the same call runs again.
    const again = mark();
    fake.userMessage({ author: olga, channelId: DEV, content: `<@${fake.bot.id}> FIVE checks after the loop` });
    await botPost('five checks done', again);
    expect(toolResults('FIVE checks after the loop').every((t) => t.includes('No commits yet'))).toBe(true);
  });

  it('a subagent’s calls count toward the run that spawned it, and so does the turn its result starts', async () => {
    const from = mark();
    fake.userMessage({ author: olga, channelId: DEV, content: `<@${fake.bot.id}> DELEGATE the git checks` });
    await botPost(/^after the child: /, from);
    // Twelve in the parent, then the child: its 9th call is the run's 21st, and is blocked.
    const child = toolResults('CHILD: keep checking git status');
    expect(child).toHaveLength(9);
    expect(child.slice(0, 8).every((t) => t.includes('No commits yet'))).toBe(true);
    expect(child[8]).toContain('CRITICAL: Called exec with identical outcomes 20 times.');
    // The parent turn the child's result started continues that run: no fresh count there either.
    expect(String((await botPost(/^after the child: /, from)).body.content)).toBe('after the child: blocked');
  });
});
