// The secrets tool end to end, on the Discord and Slack fakes with the real discord.js and Bolt
// adapters and the scripted model: the model asks for DEPLOY_TOKEN; only the person who asked
// can open the private prompt (a modal, from a button); the value they submit reaches the exec
// command `secrets.grants` names — and nothing else: not the model (in any encoding), not a
// posted message, not the store's rows beside its ciphertext, not a command the grant does not
// name. A model that writes the secret's label into a file gets an error.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { secretForms } from '../../src/redact/scrub.js';
import { AuditLog } from '../../src/store/audit.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { startSlackFake, type SlackFake, type SlackMessage } from '../fakes/slack/index.js';

const VALUE = 'dep-T0ken-Xq93Lm27Vz81Kp46';
const DEPLOY_SCRIPT = 'printf "%s" "$DEPLOY_TOKEN" > received.txt\necho deployed\n';

function respond(r: FakeRequest): FakeReply {
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1)!;
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  if (last.role === 'tool') return { kind: 'reply', text: `Tool said: ${text.slice(0, 800)}` };
  if (text.includes('need the deploy token')) return { kind: 'reply', toolCalls: [{ name: 'secrets', args: { action: 'request', name: 'DEPLOY_TOKEN', reason: 'to run the deploy script' } }] };
  if (text.includes('run the deploy')) return { kind: 'reply', toolCalls: [{ name: 'exec', args: { command: 'sh deploy.sh' } }] };
  if (text.includes('print it')) return { kind: 'reply', toolCalls: [{ name: 'exec', args: { command: 'printenv DEPLOY_TOKEN; echo; printenv DEPLOY_TOKEN | base64' } }] };
  if (text.includes('sneak it')) return { kind: 'reply', toolCalls: [{ name: 'exec', args: { command: 'cat received.txt; sh deploy.sh' } }] };
  if (text.includes('list secrets')) return { kind: 'reply', toolCalls: [{ name: 'secrets', args: { action: 'list' } }] };
  if (text.includes('write the label')) return { kind: 'reply', toolCalls: [{ name: 'write', args: { path: 'token.txt', content: '[secret:DEPLOY_TOKEN]' } }] };
  return { kind: 'reply', text: 'ok' };
}

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
});
afterAll(async () => {
  await model?.close();
});

function workspaceDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-secrets-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  writeFileSync(path.join(dir, 'workspace', 'deploy.sh'), DEPLOY_SCRIPT);
  return dir;
}

const common = (dir: string) => ({
  models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
  tools: { profile: 'coding', alsoAllow: ['secrets'], exec: { host: 'gateway', security: 'full', ask: 'off' } },
  secrets: { grants: [{ name: 'DEPLOY_TOKEN', to: 'exec', commands: ['sh deploy.sh'] }] },
  dataDir: path.join(dir, 'data'),
});

const leaksIn = (text: string) => secretForms(VALUE).filter((f) => text.replace(/\r?\n/g, '').includes(f));

async function storeHoldsNoValue(warden: RunningWarden, dir: string): Promise<void> {
  const audit = await new AuditLog(warden.store.db).list({ typePrefix: 'secret.' });
  expect(audit.map((e) => e.type)).toEqual(expect.arrayContaining(['secret.requested', 'secret.set', 'secret.used']));
  expect(audit.every((e) => e.subject === 'DEPLOY_TOKEN')).toBe(true);
  await warden.stop();
  const data = path.join(dir, 'data');
  const raw = readdirSync(data).filter((f) => f.startsWith('warden')).map((f) => readFileSync(path.join(data, f)).toString('latin1')).join('\n');
  expect(raw).toContain('secret_values');
  expect(leaksIn(raw)).toEqual([]);
}

describe('secrets tool on Discord', () => {
  const GUILD = '300000000000000001';
  const DEV = '300000000000000003';
  const bob = fakeUser('400000000000000002', 'bob');
  const mallory = fakeUser('400000000000000007', 'mallory');
  let fake: DiscordFake;
  let warden: RunningWarden;
  let dir: string;

  beforeAll(async () => {
    fake = await startDiscordFake();
    dir = workspaceDir();
    const parsed = parseConfig({
      ...common(dir),
      // Storing a secret is an owner's act: bob owns the bot, mallory does not.
      owners: { discord: [bob.id] },
      channels: { discord: { token: 'test-token', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { dev: { tools: { allow: ['*'] } } } } } } },
    });
    if (!parsed.ok) throw parsed.error;
    const from = Date.now();
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test', PATH: process.env.PATH }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    warden = started.warden;
    await fake.frames.waitFor((f) => f.op === 2 && f.at >= from, 10_000, 'IDENTIFY');
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  const mark = () => fake.requests.records.length;
  const ask = async (text: string, expect = 'Tool said:') => {
    const from = mark();
    fake.userMessage({ author: bob, channelId: DEV, content: `<@${fake.bot.id}> ${text}` });
    const posted = await fake.requests.waitFor(
      (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${DEV}/messages` && String(r.body?.content ?? '').includes(expect),
      20_000,
      text,
    );
    return String(posted.body.content);
  };
  const lastTool = () => JSON.stringify((model.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'tool').at(-1)?.content ?? '');
  const buttons = (m: APIMessage) => (m.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);

  it('asks only the requester, through a button and a modal; the granted command receives the value', async () => {
    const answer = await ask('we need the deploy token');
    expect(answer).toContain('requested');
    // The prompt is in bob's DM, with a button.
    const dm = await fake.requests.waitFor((r: RecordedRequest) => r.method === 'POST' && /^\/channels\/\d+\/messages$/.test(r.path) && r.path !== `/channels/${DEV}/messages` && Array.isArray(r.body?.components), 10_000, 'the prompt in the DM');
    const prompt = fake.botMessagesIn(dm.path.split('/')[2]!).at(-1)!;
    const buttonId = buttons(prompt).find((id) => id.startsWith('warden-secret:'))!;
    expect(prompt.content).toContain('DEPLOY_TOKEN');

    // Someone else cannot open it: a private refusal, no modal.
    const other = fake.click({ message: prompt, customId: buttonId, user: mallory });
    const refusal = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(other.token), 10_000, 'refusal');
    expect(refusal.body.type).toBe(4);
    expect(refusal.body.data.flags & 64).toBe(64);
    expect(fake.modals).toHaveLength(0);

    // Bob opens the modal and submits the value.
    const click = fake.click({ message: prompt, customId: buttonId, user: bob });
    await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(click.token) && r.body?.type === 9, 10_000, 'modal');
    const modal = fake.modals.at(-1)!;
    expect(modal.customId).toMatch(/^warden-secret-modal:/);
    const from = mark();
    const submit = fake.submitModal({ customId: modal.customId, user: bob, values: { secret_value: VALUE } });
    const saved = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(submit.token), 10_000, 'saved');
    expect(saved.body.data.content).toContain('DEPLOY_TOKEN saved');
    expect(saved.body.data.flags & 64).toBe(64);
    await fake.requests.waitFor((r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.path === `/channels/${DEV}/messages` && String(r.body?.content).includes('DEPLOY_TOKEN is set'), 10_000, 'set notice');

    // A second submission of the same request is refused (answered once).
    const again = fake.submitModal({ customId: modal.customId, user: bob, values: { secret_value: 'other' } });
    const closed = await fake.requests.waitFor((r: RecordedRequest) => r.path.includes(again.token), 10_000, 'closed');
    expect(closed.body.data.content).toContain('no longer open');

    await ask('run the deploy');
    expect(lastTool()).toContain('deployed');
    expect(readFileSync(path.join(dir, 'workspace', 'received.txt'), 'utf8')).toBe(VALUE);
  });

  it('a command the grant does not name gets nothing; output holding it comes back as its label', async () => {
    await ask('print it');
    expect(lastTool()).not.toContain('[secret:DEPLOY_TOKEN]');
    // `cat received.txt; sh deploy.sh` is a chain, not the command the grant names: the file read
    // comes back scrubbed, and the script this time runs without the value.
    await ask('sneak it');
    expect(lastTool()).toContain('[secret:DEPLOY_TOKEN]');
    expect(readFileSync(path.join(dir, 'workspace', 'received.txt'), 'utf8')).toBe('');
  });

  it('list shows names only; a label written into a file is refused', async () => {
    await ask('list secrets');
    expect(lastTool()).toMatch(/name\\": \\"DEPLOY_TOKEN/);
    expect(lastTool()).toMatch(/set\\": true/);
    await ask('write the label');
    expect(lastTool()).toContain('placeholder [secret:DEPLOY_TOKEN]');
    expect(existsSync(path.join(dir, 'workspace', 'token.txt'))).toBe(false);
  });

  it('the value appears nowhere else: model requests, posted messages, stored rows', async () => {
    for (const r of model.requests) expect(leaksIn(JSON.stringify(r.body))).toEqual([]);
    const posted = fake.requests.records.filter((r) => r.method !== 'GET').map((r) => r.raw.toString('utf8'));
    // The modal submission is inbound (a gateway dispatch), never a request the bot made.
    expect(leaksIn(posted.join('\n'))).toEqual([]);
    await storeHoldsNoValue(warden, dir);
  });
});

describe('secrets tool on Slack', () => {
  const SECRET = 'e2e-signing-secret';
  const DEV = 'C0000DEV';
  const BOB = 'U0000BOB';
  const MALLORY = 'U0000MAL';
  let fake: SlackFake;
  let warden: RunningWarden;
  let url: string;
  let dir: string;

  beforeAll(async () => {
    fake = await startSlackFake();
    dir = workspaceDir();
    const parsed = parseConfig({
      ...common(dir),
      owners: { slack: [BOB] },
      channels: { slack: { botToken: 'xoxb-fake', signingSecret: SECRET, apiUrl: fake.apiUrl, port: 0, host: '127.0.0.1', streaming: false, channels: { '#dev': { tools: { allow: ['*'] } } } } },
    });
    if (!parsed.ok) throw parsed.error;
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test', PATH: process.env.PATH }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    warden = started.warden;
    url = (warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  const mark = () => fake.requests.records.length;
  const ask = async (text: string, expect = 'Tool said:') => {
    const from = mark();
    await fake.sendEvent(url, fake.envelope(fake.messageEvent({ user: BOB, channel: DEV, text: `<@${fake.bot.userId}> ${text}`, type: 'app_mention' })), { secret: SECRET });
    const posted = await fake.requests.waitFor((r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.path === '/api/chat.postMessage' && String(r.body?.text ?? '').includes(expect), 20_000, text);
    return String(posted.body.text);
  };
  const lastTool = () => JSON.stringify((model.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'tool').at(-1)?.content ?? '');

  it('an ephemeral prompt for the requester; the modal submission reaches the granted command only', async () => {
    await ask('we need the deploy token');
    const ephemeral = await fake.waitForCall('chat.postEphemeral', (b) => typeof b.blocks === 'string' || Array.isArray(b.blocks));
    expect(ephemeral.body.user).toBe(BOB);
    const blocks = typeof ephemeral.body.blocks === 'string' ? JSON.parse(ephemeral.body.blocks) : ephemeral.body.blocks;
    const button = blocks.find((b: any) => b.type === 'actions').elements[0];
    const message: SlackMessage = { channel: DEV, ts: ephemeral.body.ts ?? '1.000001', text: String(ephemeral.body.text), blocks };

    // Mallory's click opens nothing.
    await fake.sendAction(url, fake.blockActions({ message, actionId: button.action_id, value: button.value, user: MALLORY }), { secret: SECRET });
    await fake.waitForCall('chat.postEphemeral', (b) => b.user === MALLORY && String(b.text).includes('Only the person'));
    expect(fake.views).toHaveLength(0);

    await fake.sendAction(url, fake.blockActions({ message, actionId: button.action_id, value: button.value, user: BOB }), { secret: SECRET });
    await fake.waitForCall('views.open');
    const view = fake.views.at(-1)!;
    expect(view.callback_id).toMatch(/^warden-secret-modal:/);
    const response = await fake.sendAction(url, fake.viewSubmission({ viewId: view.id, user: BOB, values: { secret: { secret_value: VALUE } } }), { secret: SECRET });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { response_action: string; view: unknown };
    expect(body.response_action).toBe('update');
    expect(JSON.stringify(body.view)).toContain('DEPLOY_TOKEN saved');

    await ask('run the deploy');
    expect(lastTool()).toContain('deployed');
    expect(readFileSync(path.join(dir, 'workspace', 'received.txt'), 'utf8')).toBe(VALUE);
    await ask('print it');
    expect(lastTool()).not.toContain(VALUE);
  });

  it('the value appears nowhere else', async () => {
    for (const r of model.requests) expect(leaksIn(JSON.stringify(r.body))).toEqual([]);
    // What the bot sent to Slack (not what Slack delivered to it, which the fake builds).
    const posted = fake.requests.records.filter((r) => r.path.startsWith('/api/')).map((r) => r.raw.toString('utf8'));
    expect(leaksIn(posted.join('\n'))).toEqual([]);
    await storeHoldsNoValue(warden, dir);
  });
});
