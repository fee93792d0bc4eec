// Skill commands end to end: Warden as `warden start` runs it, with the real discord.js and
// Bolt adapters against the loopback fakes and the OpenAI SDK against a loopback model. Two
// operator skills (managed, under the data dir): `release-notes` (a model turn with its instructions) and `run`
// (`command-dispatch: tool` to exec, no model).
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import { decodeApprovalAction } from '../../adapters/common/approval-card.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { writeSkill } from '../../src/skills/testing.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import { type FakeModelServer, type FakeRequest, lastUserText } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { startSlackFake, type SlackFake, type SlackMessage } from '../fakes/slack/index.js';

const NOTES_BODY = '# Release notes\n\nRELEASE-NOTES-INSTRUCTIONS: group the changes by who must act.\n';


let model: FakeModelServer;

beforeAll(async () => {
  // A skill turn is answered with the request it was given, so the test sees what the model read.
  model = await startFakeOpenAI({
    respond: (r) => {
      const text = lastUserText(r);
      const request = text.split('\n\nUser request:\n')[1];
      return { kind: 'reply', text: request !== undefined && text.includes('RELEASE-NOTES-INSTRUCTIONS') ? `Notes drafted for: ${request}` : 'ok' };
    },
  });
});
afterAll(async () => {
  await model?.close();
});

/**
 * A project whose managed skill folder (under the data dir, where only the operator writes)
 * holds the two skills: the same skills in the workspace would be agent-written — refused where
 * they shadow a bundled skill, and never dispatching to a tool (agent-written-skills.test.ts).
 */
function project(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-skill-cmd-e2e-'));
  mkdirSync(path.join(dir, 'workspace'), { recursive: true });
  const skills = path.join(dir, 'data', 'skills');
  mkdirSync(skills, { recursive: true });
  writeSkill(skills, 'release-notes', 'name: release-notes\ndescription: Draft release notes for a version', NOTES_BODY);
  writeSkill(skills, 'run', 'description: Run a shell command in the workspace\ncommand-dispatch: tool\ncommand-tool: exec\ncommand-arg-mode: raw');
  return dir;
}

const runsIn = (dir: string) => (existsSync(path.join(dir, 'workspace', 'runs.log')) ? readFileSync(path.join(dir, 'workspace', 'runs.log'), 'utf8').split('\n').filter(Boolean).length : 0);

describe('skill commands on Discord', () => {
  const GUILD = '300000000000000001';
  const GENERAL = '300000000000000002';
  const DEV = '300000000000000003';
  const alice = fakeUser('400000000000000001', 'alice');
  const olga = fakeUser('400000000000000009', 'olga');
  let fake: DiscordFake;
  let warden: RunningWarden;
  let dir: string;

  const mark = () => fake.requests.records.length;
  const after = (from: number) => (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from;
  const botPost = (channelId: string, from: number, pred: (content: string) => boolean = () => true) =>
    fake.requests.waitFor((r) => after(from)(r) && r.method === 'POST' && r.path === `/channels/${channelId}/messages` && pred(String(r.body?.content ?? '')), 10_000, `bot post in ${channelId}`);
  const answer = (token: string, pred: (content: string) => boolean = () => true) =>
    fake.requests.waitFor((r) => r.method === 'PATCH' && r.path === `/webhooks/${fake.bot.id}/${token}/messages/@original` && pred(String(r.body?.content ?? '')), 10_000, `answer to ${token}`);
  const cardButtons = (m: APIMessage) => (m.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);
  const puts = (from: number) => fake.requests.records.slice(from).filter((r) => r.method === 'PUT' && r.path === `/applications/${fake.bot.id}/commands`);

  beforeAll(async () => {
    fake = await startDiscordFake();
    dir = project();
    const parsed = parseConfig({
      owners: { discord: [olga.id] },
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: { profile: 'coding', exec: { host: 'gateway' } },
      channels: {
        discord: {
          token: 'test-token',
          apiBaseUrl: fake.apiBaseUrl, streaming: false,
          guilds: { [GUILD]: { channels: { general: { tools: { deny: ['exec', 'process'] } }, dev: { tools: { allow: ['*'] } } } } },
        },
      },
      dataDir: path.join(dir, 'data'),
    });
    if (!parsed.ok) throw parsed.error;
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    warden = started.warden;
    await fake.requests.waitFor((r) => r.method === 'PUT' && r.path === `/applications/${fake.bot.id}/commands`, 10_000, 'registration');
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  it('registers each skill command beside the built-ins, with a free-text input option', () => {
    const names = fake.commands.map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['tools', 'exec', 'release_notes', 'run']));
    expect(fake.commands.find((c) => c.name === 'release_notes')).toMatchObject({
      description: 'Draft release notes for a version',
      options: [{ type: 3, name: 'input', required: false }],
    });
    expect(fake.commands.find((c) => c.name === 'run')?.options?.[0]?.description).toBe('Arguments for exec');
  });

  it('typed, with or without a mention, a skill command is a model turn with the skill\'s instructions', async () => {
    let from = mark();
    fake.userMessage({ author: alice, channelId: GENERAL, content: `<@${fake.bot.id}> /release-notes v1.2` });
    expect((await botPost(GENERAL, from)).body.content).toBe('Notes drafted for: /release-notes v1.2');
    const asked = lastUserText(model.requests.at(-1)!);
    expect(asked).toMatch(/^alice: Use the following explicitly referenced skills for this request\./i);
    expect(asked).toContain('- release-notes (SKILL.md: ');
    expect(asked).toContain('RELEASE-NOTES-INSTRUCTIONS');

    // Like a built-in command, it needs no mention where mentions are required.
    from = mark();
    fake.userMessage({ author: alice, channelId: GENERAL, content: '/release_notes v1.3' });
    expect((await botPost(GENERAL, from)).body.content).toBe('Notes drafted for: /release_notes v1.3');
  });

  it('native, the skill command fills its public reply with the turn\'s answer', async () => {
    const { id, token } = fake.command({ name: 'release_notes', options: { input: 'v2.0' }, user: alice, channelId: GENERAL });
    const deferred = await fake.interactionCallback(id);
    expect(deferred.body.type).toBe(5);
    expect(deferred.body.data?.flags ?? 0).toBe(0);
    expect((await answer(token)).body.content).toBe('Notes drafted for: /release_notes v2.0');
  });

  it('command-dispatch: tool runs exec directly where exec is allowed, without the model', async () => {
    const asked = model.requests.length;
    const { token } = fake.command({ name: 'run', options: { input: 'pwd' }, user: alice, channelId: DEV });
    const reply = await answer(token);
    expect(reply.body.content).toMatch(new RegExp(`^\`\`\`\n${path.join(dir, 'workspace')}\n`));
    expect(model.requests.length).toBe(asked);
  });

  it('command-dispatch: tool in #general, where policy removed exec, says what removed it and runs nothing', async () => {
    const asked = model.requests.length;
    const from = mark();
    fake.userMessage({ author: alice, channelId: GENERAL, content: `<@${fake.bot.id}> /run echo run >> runs.log` });
    expect((await botPost(GENERAL, from)).body.content).toBe(`/run: exec is not available here: removed by channels.discord.guilds.${GUILD}.channels.general.tools.deny.`);
    const native = fake.command({ name: 'run', options: { input: 'pwd' }, user: alice, channelId: GENERAL });
    expect((await answer(native.token)).body.content).toBe(`/run: exec is not available here: removed by channels.discord.guilds.${GUILD}.channels.general.tools.deny.`);
    expect(fake.botMessagesIn(GENERAL).some((m) => cardButtons(m).length > 0)).toBe(false);
    expect(runsIn(dir)).toBe(0);
    expect(model.requests.length).toBe(asked);
  });

  it('command-dispatch: tool raises exec\'s approval card; the approver\'s click runs it once', async () => {
    const from = mark();
    const { token } = fake.command({ name: 'run', options: { input: 'echo run >> runs.log' }, user: alice, channelId: DEV });
    await fake.requests.waitFor((r) => after(from)(r) && r.method === 'POST' && r.path === `/channels/${DEV}/messages` && Array.isArray(r.body?.components) && r.body.components.length > 0, 10_000, 'card');
    const card = fake.botMessagesIn(DEV).filter((m) => cardButtons(m).length > 0).at(-1)!;
    expect(card.content + JSON.stringify(card.embeds)).toContain('echo run >> runs.log');
    expect(await warden.approvals.list()).toHaveLength(1);
    expect(runsIn(dir)).toBe(0);
    const allow = cardButtons(card).find((id) => decodeApprovalAction(id)?.decision === 'allow-once')!;
    fake.click({ message: card, customId: allow, user: olga });
    expect((await answer(token, (c) => c.includes('```'))).body.content).toContain('(no output)');
    expect(runsIn(dir)).toBe(1);
  });

  it('an unknown command is answered as unknown, typed or native, and never reaches the model', async () => {
    const asked = model.requests.length;
    const from = mark();
    fake.userMessage({ author: alice, channelId: GENERAL, content: `<@${fake.bot.id}> /release-note v1` });
    expect((await botPost(GENERAL, from)).body.content).toBe('Unknown command /release-note (did you mean /release_notes?). /help lists the commands; nothing was sent to the model.');
    // A command an older version left registered: answered privately by the router.
    fake.commands.push({ id: '999', name: 'ping', description: 'old', type: 1, options: [] });
    const { id, token } = fake.command({ name: 'ping', user: alice, channelId: GENERAL });
    expect((await fake.interactionCallback(id)).body).toEqual({ type: 5, data: { flags: 64 } });
    expect((await answer(token)).body.content).toMatch(/^Unknown command \/ping/);
    fake.commands.pop();
    expect(model.requests.length).toBe(asked);
  });

  it('/help lists the skill commands', async () => {
    const from = mark();
    fake.userMessage({ author: alice, channelId: GENERAL, content: '/help' });
    const help = (await botPost(GENERAL, from)).body.content as string;
    expect(help).toContain('/release_notes [input] — Draft release notes for a version');
    expect(help).toContain('/run [input] — Run a shell command in the workspace (runs exec)');
  });

  it('a skill added on disk becomes a native command: one registration once the set settles; an unchanged set sends nothing', async () => {
    // Let the skill watcher finish its first scan.
    await sleep(1_000);
    const from = mark();
    const skills = path.join(dir, 'data', 'skills');
    writeSkill(skills, 'deploy', 'description: Deploy v1');
    writeSkill(skills, 'deploy', 'description: Deploy the service');
    await fake.requests.waitFor((r) => after(from)(r) && r.method === 'PUT' && r.path === `/applications/${fake.bot.id}/commands`, 15_000, 're-registration');
    expect(fake.commands.find((c) => c.name === 'deploy')?.description).toBe('Deploy the service');
    await sleep(2_000);
    expect(puts(from)).toHaveLength(1);

    // Typed at once, native too.
    const native = fake.command({ name: 'deploy', options: { input: 'now' }, user: alice, channelId: GENERAL });
    expect((await answer(native.token)).body.content).toBe('ok');

    const again = mark();
    writeSkill(skills, 'deploy', 'description: Deploy the service');
    await sleep(2_500);
    expect(puts(again)).toHaveLength(0);
  });
});

describe('skill commands on Slack', () => {
  const SECRET = 'e2e-signing-secret';
  const GENERAL = 'C0000GEN';
  const DEV = 'C0000DEV';
  const ALICE = 'U0000ALICE';
  const OLGA = 'U0000OLGA';
  let fake: SlackFake;
  let warden: RunningWarden;
  let dir: string;
  let url: string;
  const signed = { secret: SECRET };

  const mark = () => fake.requests.records.length;
  const after = (from: number) => (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from;
  const response = (payload: Record<string, string>, pred: (body: any) => boolean = () => true) =>
    fake.requests.waitFor((r) => r.path === `/response/${payload.trigger_id}` && pred(r.body), 10_000, `response to ${payload.command} ${payload.text}`);
  const reply = (channel: string, from: number, pred: (text: string) => boolean = () => true) =>
    fake.requests.waitFor((r) => after(from)(r) && r.path === '/api/chat.postMessage' && r.body.channel === channel && !r.body.blocks && pred(String(r.body.text ?? '')), 10_000, `reply in ${channel}`);
  const mention = (user: string, channel: string, text: string) =>
    fake.sendEvent(url, fake.envelope(fake.messageEvent({ user, channel, text: `<@${fake.bot.userId}> ${text}`, type: 'app_mention' })), signed);
  const command = async (commandName: string, text: string, user: string, channel: string) => {
    const payload = fake.slashCommand({ command: commandName, text, user, channel });
    const acked = await fake.sendCommand(url, payload, signed);
    return { payload, acked };
  };

  beforeAll(async () => {
    fake = await startSlackFake();
    dir = project();
    const parsed = parseConfig({
      owners: { slack: [OLGA] },
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: { profile: 'coding', exec: { host: 'gateway' } },
      channels: {
        slack: {
          botToken: 'xoxb-fake',
          signingSecret: SECRET, streaming: false,
          apiUrl: fake.apiUrl,
          port: 0,
          host: '127.0.0.1',
          channels: { '#general': { tools: { deny: ['exec', 'process'] } }, '#dev': { tools: { allow: ['*'] } } },
        },
      },
      dataDir: path.join(dir, 'data'),
    });
    if (!parsed.ok) throw parsed.error;
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    warden = started.warden;
    url = (warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  it('/warden release-notes and /warden-release-notes are the skill\'s model turn, answered in the channel', async () => {
    const one = await command('/warden', 'release-notes v1.2', ALICE, GENERAL);
    expect(one.acked.status).toBe(200);
    const first = await response(one.payload);
    expect(first.body).toMatchObject({ response_type: 'in_channel', text: 'Notes drafted for: /release-notes v1.2' });

    const two = await command('/warden-release-notes', 'v1.3', ALICE, GENERAL);
    expect((await response(two.payload)).body.text).toBe('Notes drafted for: /release-notes v1.3');
  });

  it('typed with a mention, the skill command works as on Discord', async () => {
    const from = mark();
    await mention(ALICE, GENERAL, '/release_notes v1.4');
    expect((await reply(GENERAL, from)).body.text).toBe('Notes drafted for: /release_notes v1.4');
  });

  it('command-dispatch: tool: allowed in #dev, refused in #general with what removed exec, a card for what exec must ask', async () => {
    const asked = model.requests.length;
    const ok = await command('/warden-run', 'pwd', ALICE, DEV);
    expect(String((await response(ok.payload)).body.text)).toMatch(new RegExp(`^\`\`\`\n${path.join(dir, 'workspace')}\n`));

    const refused = await command('/warden', 'run pwd', ALICE, GENERAL);
    expect((await response(refused.payload)).body.text).toBe('/run: exec is not available here: removed by channels.slack.channels["#general"].tools.deny.');

    const carded = await command('/warden', 'run echo run >> runs.log', ALICE, DEV);
    const posted = await fake.requests.waitFor((r) => r.path === '/api/chat.postMessage' && r.body.channel === DEV && Array.isArray(r.body.blocks), 10_000, 'approval card');
    const card = [...fake.messages.values()].find((m: SlackMessage) => m.channel === DEV && m.text === posted.body.text && m.blocks?.some((b) => b.type === 'actions'))!;
    expect(runsIn(dir)).toBe(0);
    const button = (card.blocks!.find((b) => b.type === 'actions')?.elements ?? []).find((b: any) => b.action_id === 'warden_approval_allow-once');
    await fake.sendAction(url, fake.blockActions({ message: card, actionId: button.action_id, value: button.value, user: OLGA }), signed);
    expect(String((await response(carded.payload, (b) => String(b.text).includes('```'))).body.text)).toContain('(no output)');
    expect(runsIn(dir)).toBe(1);
    expect(model.requests.length).toBe(asked);
  });

  it('an unknown word is answered with a did-you-mean, natively in the acknowledgement and typed in the channel', async () => {
    const asked = model.requests.length;
    const { acked } = await command('/warden', 'release-note v1', ALICE, GENERAL);
    expect(await acked.json()).toEqual({ response_type: 'ephemeral', text: 'Unknown command /release-note (did you mean /release_notes?). `/warden help` lists the commands; nothing was sent to the model.' });
    const from = mark();
    await mention(ALICE, GENERAL, '/frobnicate');
    expect((await reply(GENERAL, from)).body.text).toBe('Unknown command /frobnicate. /help lists the commands; nothing was sent to the model.');
    await sleep(100);
    expect(model.requests.length).toBe(asked);
  });
});
