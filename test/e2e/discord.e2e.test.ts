// Warden as `warden start` runs it — store, approval service, gateway, the real discord.js
// adapter — against the loopback Discord fake. One fake for the file; each test starts its own
// Warden on a fresh data dir unless it is about restarting.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { execa, type ResultPromise } from 'execa';
import type { APIMessage, APIUser } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalAction } from '../../adapters/common/approval-card.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import type { RecordedRequest } from '../fakes/recorder.js';

const GUILD = '300000000000000001';
const GENERAL = '300000000000000002';
const DEV = '300000000000000003';
const alice = fakeUser('400000000000000001', 'alice');
const bob = fakeUser('400000000000000002', 'bob');
const olga = fakeUser('400000000000000009', 'olga');

let fake: DiscordFake;
const running: RunningWarden[] = [];

beforeAll(async () => {
  fake = await startDiscordFake();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await fake?.close();
});

function newDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-discord-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  return dir;
}

function configFor(dir: string, extra: Record<string, unknown> = {}) {
  return {
    owners: { discord: [olga.id] },
    tools: { profile: 'coding', exec: { host: 'gateway' } },
    channels: {
      discord: {
        token: 'test-token',
        apiBaseUrl: fake.apiBaseUrl,
        guilds: { [GUILD]: { channels: { general: { tools: { deny: ['exec', 'process'] } }, dev: { tools: { allow: ['*'] } } } } },
      },
    },
    dataDir: path.join(dir, 'data'),
    ...extra,
  };
}

async function start(dir = newDir(), extra: Record<string, unknown> = {}): Promise<RunningWarden & { dir: string }> {
  const parsed = parseConfig(configFor(dir, extra));
  if (!parsed.ok) throw parsed.error;
  const from = Date.now();
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {}, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  await fake.frames.waitFor((f) => f.op === 2 && f.at >= from, 5_000, 'IDENTIFY');
  return Object.assign(started.warden, { dir });
}

/** A position in the fake's request log: only requests recorded after it count. */
const mark = () => fake.requests.records.length;
const after = (from: number) => (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from;

/** The next message the bot posts in a channel after `from`, matching `pred`. */
function botPost(channelId: string, from: number, pred: (body: any) => boolean = () => true, what = 'bot message'): Promise<RecordedRequest> {
  return fake.requests.waitFor(
    (r) => after(from)(r) && r.method === 'POST' && r.path === `/channels/${channelId}/messages` && pred(r.body),
    8_000,
    `${what} in ${channelId}`,
  );
}

function say(author: APIUser, channelId: string | 'dm', content: string) {
  return channelId === 'dm'
    ? fake.userMessage({ author, dm: true, content })!
    : fake.userMessage({ author, channelId, content: `<@${fake.bot.id}> ${content}` })!;
}

const cardButtons = (message: APIMessage) =>
  (message.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);

/** The card message the bot posted (with buttons), as stored by the fake. */
async function cardIn(channelId: string, from: number): Promise<APIMessage> {
  await botPost(channelId, from, (b) => Array.isArray(b.components) && b.components.length > 0, 'approval card');
  return fake.botMessagesIn(channelId).filter((m) => cardButtons(m).length > 0).at(-1)!;
}

function clickOn(card: APIMessage, decision: string, user: APIUser) {
  const customId = cardButtons(card).find((id) => decodeApprovalAction(id)?.decision === decision);
  if (!customId) throw new Error(`card has no ${decision} button: ${cardButtons(card).join(', ')}`);
  return fake.click({ message: card, customId, user });
}

/** Every text the bot sent about an interaction: callback data, follow-ups, edits of the original. */
function interactionTexts(token: string): string[] {
  return fake.requests.records
    .filter((r) => r.path.includes(token))
    .map((r) => JSON.stringify(r.body ?? {}));
}

const runsIn = (dir: string) => (existsSync(path.join(dir, 'workspace', 'runs.log')) ? readFileSync(path.join(dir, 'workspace', 'runs.log'), 'utf8').split('\n').filter(Boolean).length : 0);

describe('Discord end to end', () => {
  it('#general has no exec on the surface; /exec there runs nothing', async () => {
    await start();
    let from = mark();
    say(alice, GENERAL, '/tools');
    const tools = await botPost(GENERAL, from);
    expect(tools.body.content).toMatch(/^Your tools here/);
    expect(tools.body.content.split('\n')[0]).not.toMatch(/\bexec\b/);
    expect(tools.body.content).toContain('• exec — removed by');

    from = mark();
    say(alice, GENERAL, '/exec echo hi');
    const refused = await botPost(GENERAL, from);
    expect(refused.body.content).toMatch(/^exec is not available here: removed by /);
    expect(fake.botMessagesIn(GENERAL).some((m) => cardButtons(m).length > 0)).toBe(false);
  });

  it('in #dev /exec raises a card; a non-approver click is refused, the approver runs it once', async () => {
    const warden = await start();
    const from = mark();
    say(alice, DEV, '/exec echo run >> runs.log');
    const card = await cardIn(DEV, from);
    expect(card.content + JSON.stringify(card.embeds)).toContain('echo run >> runs.log');

    const refused = clickOn(card, 'allow-once', bob);
    await fake.requests.waitFor((r) => r.path.includes(refused.token) && JSON.stringify(r.body).includes('not allowed'), 5_000, 'refusal');
    expect(interactionTexts(refused.token).join()).toContain('"flags":64');
    await sleep(200);
    expect(runsIn(warden.dir)).toBe(0);
    expect(await warden.approvals.list()).toHaveLength(1);

    const afterRefusal = mark();
    const approved = clickOn(card, 'allow-once', olga);
    await fake.requests.waitFor((r) => r.path.includes(approved.token) && JSON.stringify(r.body).includes(`Allowed once by <@${olga.id}>`), 5_000, 'card edit');
    const result = await botPost(DEV, afterRefusal, (b) => typeof b.content === 'string' && b.content.includes('```'), 'exec result');
    expect(result.body.content).toContain('(no output)');
    expect(runsIn(warden.dir)).toBe(1);

    const again = clickOn(card, 'allow-once', olga);
    await fake.requests.waitFor((r) => r.path.includes(again.token) && JSON.stringify(r.body).includes('already resolved'), 5_000, 'already resolved');
    await sleep(200);
    expect(runsIn(warden.dir)).toBe(1);
  });

  it('expiry edits the card to Expired', async () => {
    const warden = await start();
    const from = mark();
    const outcome = warden.approvals.request(
      { kind: 'exec', tool: 'exec', title: 'Run a command', preview: 'uname', fullText: 'uname', allowedDecisions: ['allow-once', 'deny'], timeoutMs: 300 },
      { agentId: 'main', sessionKey: `agent:main:discord:channel:${DEV}`, provider: 'discord', channelId: DEV, requesterId: alice.id },
    );
    const card = await cardIn(DEV, from);
    expect((await outcome).outcome).toBe('expired');
    const edit = await fake.requests.waitFor((r) => r.method === 'PATCH' && r.path === `/channels/${DEV}/messages/${card.id}`, 5_000, 'expiry edit');
    expect(JSON.stringify(edit.body)).toContain('Expired');
    expect(edit.body.components ?? []).toEqual([]);
  });

  it('a non-owner never sees cron, gateway or nodes in /tools; the owner in a DM does', async () => {
    await start(newDir(), { tools: { profile: 'full' } });
    let from = mark();
    say(alice, DEV, '/tools');
    const member = await botPost(DEV, from);
    expect(member.body.content).not.toMatch(/\b(cron|gateway|nodes)\b/);

    from = mark();
    say(alice, 'dm', '/tools');
    const memberDm = await botPost(fake.dmChannelOf(alice.id), from);
    expect(memberDm.body.content).not.toMatch(/\b(cron|gateway|nodes)\b/);

    from = mark();
    say(olga, 'dm', '/tools');
    const ownerDm = await botPost(fake.dmChannelOf(olga.id), from);
    const visible = ownerDm.body.content.split('\n')[0];
    for (const tool of ['cron', 'gateway', 'nodes']) expect(visible).toMatch(new RegExp(`\\b${tool}\\b`));
  });

  it('DMs of two users never share a session', async () => {
    await start();
    let from = mark();
    say(alice, 'dm', '/status');
    const a = await botPost(fake.dmChannelOf(alice.id), from);
    from = mark();
    say(bob, 'dm', '/status');
    const b = await botPost(fake.dmChannelOf(bob.id), from);
    const session = (text: string) => /Session: (\S+)/.exec(text)?.[1];
    expect(session(a.body.content)).toBe(`agent:main:discord:direct:${alice.id}`);
    expect(session(b.body.content)).toBe(`agent:main:discord:direct:${bob.id}`);
  });

  it('a card decided after a restart runs its command exactly once, and the result lands under the card', async () => {
    // Two real `warden start` processes on one data dir; the first dies while /exec waits for the click.
    const dir = newDir();
    const configFile = path.join(dir, 'warden.config.json5');
    writeFileSync(configFile, JSON.stringify(configFor(dir)));
    const launch = () => {
      const child = execa('node', [BIN, 'start', '--config', configFile], { cwd: dir, env: { WARDEN_LOG_LEVEL: 'warn' }, extendEnv: true, reject: false });
      return { child, ready: waitForLine(child, /Warden is running/) };
    };

    const first = launch();
    await first.ready;
    const from = mark();
    say(alice, DEV, '/exec echo run >> runs.log');
    const card = await cardIn(DEV, from);
    // The fake records the post before answering it; die only once the card's place is stored.
    await waitForCardRow(path.join(dir, 'data', 'warden.sqlite'), card.id);
    first.child.kill('SIGKILL');
    await first.child;

    const restartAt = mark();
    const second = launch();
    try {
      await second.ready;
      // The card is refreshed, still clickable: the call was stored and stays decidable.
      const edit = await fake.requests.waitFor(
        (r) => after(restartAt)(r) && r.method === 'PATCH' && r.path === `/channels/${DEV}/messages/${card.id}`,
        8_000,
        'card refresh after restart',
      );
      expect(JSON.stringify(edit.body)).not.toContain('Interrupted');
      expect(edit.body.components?.[0]?.components?.length).toBeGreaterThan(0);
      expect(runsIn(dir)).toBe(0);

      const clickAt = mark();
      const approved = clickOn(card, 'allow-once', olga);
      await fake.requests.waitFor((r) => r.path.includes(approved.token) && JSON.stringify(r.body).includes(`Allowed once by <@${olga.id}>`), 8_000, 'card edit');
      const result = await botPost(DEV, clickAt, (b) => typeof b.content === 'string' && b.content.includes('```'), 'result under the card');
      expect(result.body.message_reference).toMatchObject({ message_id: card.id });
      expect(result.body.content).toContain('Allowed once');
      expect(runsIn(dir)).toBe(1);

      // A second click decides nothing and runs nothing.
      const again = clickOn(card, 'allow-once', olga);
      await fake.requests.waitFor((r) => r.path.includes(again.token) && JSON.stringify(r.body).includes('already resolved'), 8_000, 'already resolved');
      await sleep(300);
      expect(runsIn(dir)).toBe(1);
    } finally {
      second.child.kill('SIGTERM');
      const result = await second.child;
      expect(result.exitCode).toBe(0);
    }
  }, 60_000);
});

describe('Discord slash commands', () => {
  /** Waits until Warden has registered its commands with the fake (after `from`). */
  const registered = (from: number) =>
    fake.requests.waitFor((r) => after(from)(r) && r.method === 'GET' && r.path === `/applications/${fake.bot.id}/commands`, 8_000, 'command check');
  /** The edit that fills a deferred command reply. */
  const answer = (token: string, pred: (content: string) => boolean = () => true) =>
    fake.requests.waitFor(
      (r) => r.method === 'PATCH' && r.path === `/webhooks/${fake.bot.id}/${token}/messages/@original` && pred(String(r.body?.content ?? '')),
      8_000,
      `answer to ${token}`,
    );

  it('registers the commands once; a restart with the same commands registers nothing', async () => {
    let from = mark();
    const first = await start();
    await registered(from);
    // The fake is shared by the file: an earlier Warden may have registered them already.
    // The built-ins, and the bundled skills eligible here (no PATH: release-notes needs git) as skill commands.
    expect(fake.commands.map((c) => c.name).sort()).toEqual(['approvals', 'approve', 'code_review', 'cron', 'exec', 'help', 'incident_triage', 'nodes', 'pair', 'secrets', 'skills', 'status', 'stop', 'tools', 'usage']);
    expect(fake.commands.find((c) => c.name === 'exec')?.options).toEqual([expect.objectContaining({ name: 'command', type: 3, required: true })]);
    expect(fake.commands.find((c) => c.name === 'cron')?.options).toEqual([expect.objectContaining({ name: 'args', type: 3, required: false })]);
    // The owner-only control commands are offered only in the bot's DM (contexts [1]), never in a guild's
    // picker, administrators' included; every other command in guilds (0) and the bot's DM (1).
    const permissions = Object.fromEntries(fake.commands.map((c) => [c.name, c.default_member_permissions]));
    expect(permissions).toMatchObject({ cron: '0', nodes: '0', pair: '0', secrets: '0', tools: null, exec: null, approve: null, status: null, code_review: null });
    const contexts = Object.fromEntries(fake.commands.map((c) => [c.name, c.contexts]));
    expect(contexts).toEqual({
      ...Object.fromEntries(fake.commands.map((c) => [c.name, [0, 1]])),
      cron: [1],
      nodes: [1],
      pair: [1],
      secrets: [1],
    });
    await first.stop();
    running.splice(running.indexOf(first), 1);

    from = mark();
    await start();
    await registered(from);
    await sleep(200);
    expect(fake.requests.filter((r) => after(from)(r) && r.path.startsWith('/applications/') && r.method !== 'GET')).toEqual([]);
  });

  it('replaces an earlier registration that offered the owner-only commands in guilds', async () => {
    let from = mark();
    const first = await start();
    await registered(from);
    await first.stop();
    running.splice(running.indexOf(first), 1);
    // As an earlier Warden registered them: every command in guilds and the bot's DM, owner-only ones hidden by permission only.
    fake.commands.splice(0, fake.commands.length, ...fake.commands.map((c) => ({ ...c, contexts: [0, 1] })));
    expect(fake.commands.find((c) => c.name === 'cron')).toMatchObject({ contexts: [0, 1], default_member_permissions: '0' });

    from = mark();
    await start();
    await fake.requests.waitFor((r) => after(from)(r) && r.method === 'PUT' && r.path === `/applications/${fake.bot.id}/commands`, 8_000, 'command replacement');
    for (const c of fake.commands) expect(c.contexts, c.name).toEqual(['cron', 'nodes', 'pair', 'secrets'].includes(c.name) ? [1] : [0, 1]);
    expect(() => fake.command({ name: 'secrets', user: olga, channelId: GENERAL })).toThrow(/not offered in guilds/);
  });

  it('/tools in #general answers privately, without exec, like the typed command', async () => {
    const from = mark();
    await start();
    await registered(from);
    const typedFrom = mark();
    say(alice, GENERAL, '/tools');
    const typed = await botPost(GENERAL, typedFrom);

    const { id, token } = fake.command({ name: 'tools', user: alice, channelId: GENERAL });
    const deferred = await fake.interactionCallback(id);
    expect(deferred.body).toEqual({ type: 5, data: { flags: 64 } });
    expect(deferred.query.get('with_response')).toBe('false');
    const reply = await answer(token);
    expect(reply.body.content).toMatch(/^Your tools here/);
    expect(reply.body.content.split('\n')[0]).not.toMatch(/\bexec\b/);
    expect(reply.body.content).toBe(typed.body.content);
    // The answer went to the interaction, not as a second post in the channel.
    await sleep(100);
    expect(fake.requests.filter((r) => after(typedFrom)(r) && r.method === 'POST' && r.path === `/channels/${GENERAL}/messages`)).toHaveLength(1);
  });

  it('/status in a DM names the sender\'s own session; the owner is an owner', async () => {
    const from = mark();
    await start();
    await registered(from);
    const member = fake.command({ name: 'status', user: alice, dm: true });
    expect((await answer(member.token)).body.content).toContain(`Session: agent:main:discord:direct:${alice.id}`);
    const owner = fake.command({ name: 'status', user: olga, channelId: DEV });
    const text = (await answer(owner.token)).body.content;
    expect(text).toContain(`Session: agent:main:discord:channel:${DEV}`);
    expect(text).toContain('You: owner');
  });

  it('/cron: not offered in a guild; the owner runs it from a DM; a non-owner reaching it in a DM is refused by the owner check', async () => {
    const from = mark();
    await start();
    await registered(from);
    // Discord offers a command only in the contexts it was registered for: the owner-only ones not in guilds, to nobody.
    expect(() => fake.command({ name: 'cron', options: { args: 'list' }, user: alice, channelId: GENERAL })).toThrow(/not offered in guilds/);
    expect(() => fake.command({ name: 'nodes', user: olga, channelId: GENERAL })).toThrow(/not offered in guilds/);
    // Permissions do not apply in the DM with the bot: the owner uses it there.
    const owner = fake.command({ name: 'cron', options: { args: 'list' }, user: olga, dm: true });
    expect((await answer(owner.token)).body.content).toMatch(/^(No cron jobs|Cron jobs \()/);
    // Anyone may reach it in their own DM; the runtime owner check answers as for any unknown word.
    const member = fake.command({ name: 'cron', options: { args: 'list' }, user: alice, dm: true });
    const refused = String((await answer(member.token)).body.content);
    expect(refused).not.toMatch(/cron jobs/i);
    expect(refused).toMatch(/no command|not a command|unknown/i);
  });

  it('/exec in #dev raises the approval card; once approved, the result fills the public reply', async () => {
    const from = mark();
    const warden = await start();
    await registered(from);
    const { id, token } = fake.command({ name: 'exec', options: { command: 'echo run >> runs.log' }, user: alice, channelId: DEV });
    const deferred = await fake.interactionCallback(id);
    expect(deferred.body.type).toBe(5);
    expect(deferred.body.data?.flags ?? 0).toBe(0); // public: everyone sees what ran
    const card = await cardIn(DEV, from);
    expect(card.content + JSON.stringify(card.embeds)).toContain('echo run >> runs.log');
    expect(await warden.approvals.list()).toHaveLength(1);
    expect(runsIn(warden.dir)).toBe(0);

    clickOn(card, 'allow-once', olga);
    const result = await answer(token, (c) => c.includes('```'));
    expect(result.body.content).toContain('(no output)');
    expect(runsIn(warden.dir)).toBe(1);
  });

  it('/exec in #general is refused in the reply and raises no card', async () => {
    const from = mark();
    await start();
    await registered(from);
    const { token } = fake.command({ name: 'exec', options: { command: 'echo hi' }, user: alice, channelId: GENERAL });
    expect((await answer(token)).body.content).toMatch(/^exec is not available here: removed by /);
    expect(fake.botMessagesIn(GENERAL).some((m) => cardButtons(m).length > 0)).toBe(false);
  });
});

async function waitForCardRow(file: string, messageId: string): Promise<void> {
  for (const until = Date.now() + 20_000; Date.now() < until; ) {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      if (db.prepare('SELECT 1 FROM approval_cards WHERE message_id = ?').get(messageId)) return;
    } finally {
      db.close();
    }
    await sleep(25);
  }
  throw new Error(`card ${messageId} was never stored`);
}

const BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));

function waitForLine(child: ResultPromise, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) resolve();
    });
    void child.then((r) => reject(new Error(`warden exited (${r.exitCode}) before "${pattern}": ${r.stderr}`)));
  });
}
