// The owner's control plane on the Discord fake with a loopback model: an owner's DM turn patches
// the config through the gateway tool, the file keeps its comments, the audit log has old → new,
// and the next #general turn runs under the new policy. A non-owner never reaches the tool; a
// widening patch waits for another owner's click; a broken file edit is refused with its key path.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIMessage } from 'discord-api-types/v10';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalAction } from '../../adapters/common/approval-card.js';
import { loadConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { AuditLog } from '../../src/store/audit.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import { type FakeModelServer, type FakeReply, type FakeRequest, lastUserText, toolNames } from '../fakes/models/server.js';

const GUILD = '300000000000000001';
const GENERAL = '300000000000000002';
const DEV = '300000000000000003';
const olga = fakeUser('400000000000000009', 'olga');
const oscar = fakeUser('400000000000000008', 'oscar');
const alice = fakeUser('400000000000000001', 'alice');

let fake: DiscordFake;
let model: FakeModelServer;
let warden: RunningWarden;
let file: string;

const CONFIG = `# Team Warden
owners:
  discord: ["${olga.id}", "${oscar.id}"]   # the two admins
models: { default: "openai/gpt-test", providers: { openai: { baseUrl: "\${MODEL_URL}" } } }
dataDir: ./data
tools:
  profile: coding
  alsoAllow: [gateway]   # owner-only either way
  exec: { host: gateway }   # exec on the host in this test
channels:
  discord:
    token: test-token
    apiBaseUrl: \${DISCORD_API}
    streaming: false   # replies read from posts
    guilds:
      "${GUILD}":
        channels:
          dev: { tools: { allow: ["*"] } }   # builders
gateway:
  reload: { debounceMs: 50 }
`;


const DENY_EXEC = { channels: { discord: { guilds: { [GUILD]: { channels: { general: { tools: { deny: ['exec', 'process'] } } } } } } } };
const WIDEN = { browser: { ssrfPolicy: { allowPrivateNetwork: true } } };

function respond(r: FakeRequest): FakeReply {
  const last = r.body.messages.at(-1) as { role: string; content?: unknown };
  if (last?.role === 'tool') return { kind: 'reply', text: `Tool said: ${String(last.content).slice(0, 400)}` };
  const text = lastUserText(r);
  if (text.includes('deny exec in general')) return { kind: 'reply', toolCalls: [{ name: 'gateway', args: { action: 'config.patch', patch: DENY_EXEC } }] };
  if (text.includes('private networks')) return { kind: 'reply', toolCalls: [{ name: 'gateway', args: { action: 'config.patch', patch: WIDEN } }] };
  return { kind: 'reply', text: 'hello' };
}

beforeAll(async () => {
  fake = await startDiscordFake();
  model = await startFakeOpenAI({ respond });
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-admin-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  file = path.join(dir, 'warden.config.yaml');
  writeFileSync(file, CONFIG);
  const env = { DISCORD_API: fake.apiBaseUrl, MODEL_URL: model.url, OPENAI_API_KEY: 'test' };
  const loaded = loadConfig({ file, env });
  if (!loaded.ok) throw loaded.error;
  const started = await startWarden(loaded.value, { env, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  warden = started.warden;
  await fake.frames.waitFor((f) => f.op === 2, 5_000, 'IDENTIFY');
}, 30_000);
afterAll(async () => {
  await warden?.stop();
  await fake?.close();
  await model?.close();
});

const botPostIn = (channelId: string, text: string, from = 0) =>
  fake.requests.waitFor((r) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${channelId}/messages` && JSON.stringify(r.body ?? {}).includes(text), 10_000, text);
const mark = () => fake.requests.records.length;
const audit = () => new AuditLog(warden.store.db);
const cardButtons = (m: APIMessage) => (m.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);
const click = (card: APIMessage, decision: string, user: typeof olga) => fake.click({ message: card, customId: cardButtons(card).find((id) => decodeApprovalAction(id)?.decision === decision)!, user });

/** The model request of the turn whose user text includes `text`. */
const requestFor = async (text: string, from: number) => {
  await expect.poll(() => model.requests.slice(from).some((r) => lastUserText(r).includes(text)), { timeout: 10_000 }).toBe(true);
  return model.requests.slice(from).find((r) => lastUserText(r).includes(text))!;
};

describe('the gateway tool administers the running Warden', () => {
  it('an owner in a DM denies exec in #general: patched, written with comments, audited, and the next #general turn has no exec', async () => {
    let seen = model.requests.length;
    fake.userMessage({ author: alice, channelId: GENERAL, content: `<@${fake.bot.id}> before the patch` });
    expect(toolNames(await requestFor('before the patch', seen))).toContain('exec');

    const from = mark();
    const identifies = fake.frames.records.filter((f) => f.op === 2).length;
    fake.userMessage({ author: olga, dm: true, content: 'please deny exec in general' });
    await botPostIn(fake.dmChannelOf(olga.id), 'Config patched and applied to new turns', from);

    const text = readFileSync(file, 'utf8');
    expect(text).toContain('# the two admins');
    expect(text).toContain('# builders');
    expect(text).toContain('apiBaseUrl: ${DISCORD_API}');
    expect(parseYaml(text).channels.discord.guilds[GUILD].channels.general.tools.deny).toEqual(['exec', 'process']);
    const patched = await audit().list({ typePrefix: 'config.patched' });
    expect(patched).toHaveLength(1);
    expect(patched[0]).toMatchObject({ actor: `discord:${olga.id}`, data: { approvedBy: null, widening: [] } });
    expect(patched[0]!.data.changes).toEqual([{ path: `channels.discord.guilds["${GUILD}"].channels.general.tools.deny`, before: null, after: ['exec', 'process'] }]);

    seen = model.requests.length;
    fake.userMessage({ author: alice, channelId: GENERAL, content: `<@${fake.bot.id}> after the patch` });
    const after = await requestFor('after the patch', seen);
    expect(toolNames(after)).not.toContain('exec');
    expect(toolNames(after)).not.toContain('process');
    // A policy change is no connection change: Discord was not reconnected.
    expect(fake.frames.records.filter((f) => f.op === 2).length).toBe(identifies);
  }, 30_000);

  it('the same patch asked by a non-owner never reaches the gateway tool', async () => {
    const seen = model.requests.length;
    const from = mark();
    const before = readFileSync(file, 'utf8');
    fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> please deny exec in general` });
    const request = await requestFor('please deny exec in general', seen);
    expect(toolNames(request)).not.toContain('gateway');
    // The call the model makes anyway is refused before any tool runs: gateway is not on alice's surface.
    await botPostIn(DEV, 'Tool said: Unknown tool', from);
    expect(await audit().list({ typePrefix: 'config.patch' })).toHaveLength(1);
    expect(readFileSync(file, 'utf8')).toBe(before);
  }, 30_000);

  it('a widening patch waits for another owner: the requester cannot approve it, the other owner can', async () => {
    const from = mark();
    fake.userMessage({ author: olga, dm: true, content: 'open the browser to private networks' });
    const oscarDm = fake.dmChannelOf(oscar.id);
    const olgaDm = fake.dmChannelOf(olga.id);
    await expect.poll(() => fake.botMessagesIn(oscarDm).filter((m) => cardButtons(m).length > 0).length, { timeout: 10_000 }).toBeGreaterThan(0);
    const card = fake.botMessagesIn(oscarDm).filter((m) => cardButtons(m).length > 0).at(-1)!;
    expect(JSON.stringify(card.embeds)).toContain('browser.ssrfPolicy.allowPrivateNetwork');
    expect(JSON.stringify(card.embeds)).toContain('an owner other than the requester');

    // Olga asked: her click changes nothing.
    const own = fake.botMessagesIn(olgaDm).filter((m) => cardButtons(m).length > 0).at(-1) ?? card;
    click(own, 'allow-once', olga);
    await expect.poll(async () => (await audit().list({ typePrefix: 'approval.refused' })).length, { timeout: 5_000 }).toBeGreaterThan(0);
    expect(parseYaml(readFileSync(file, 'utf8')).browser).toBeUndefined();
    expect(await warden.approvals.list()).toHaveLength(1);

    click(card, 'allow-once', oscar);
    await botPostIn(olgaDm, 'Approved by discord:' + oscar.id, from);
    expect(parseYaml(readFileSync(file, 'utf8')).browser.ssrfPolicy.allowPrivateNetwork).toBe(true);
    expect((await audit().list({ typePrefix: 'config.patched' })).at(-1)).toMatchObject({ actor: `discord:${olga.id}`, data: { approvedBy: `discord:${oscar.id}` } });
    expect(warden.config.live.current().loaded.config.browser.ssrfPolicy?.allowPrivateNetwork).toBe(true);
  }, 30_000);

  it('a file edit with a typo is refused with its key path; the old config keeps serving and the owners hear of it', async () => {
    const version = warden.config.live.current().version;
    const from = mark();
    writeFileSync(file, readFileSync(file, 'utf8').replace('profile: coding', 'profile: coding\n  denny: [web_fetch]'));
    await botPostIn(fake.dmChannelOf(olga.id), 'tools.denny', from);
    await botPostIn(fake.dmChannelOf(oscar.id), 'did you mean', from);
    expect(warden.config.live.current().version).toBe(version);
    const seen = model.requests.length;
    fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> still serving?` });
    expect(toolNames(await requestFor('still serving?', seen))).toContain('web_fetch');

    // Fixed, it applies: web_fetch is gone from #dev's next turn.
    writeFileSync(file, readFileSync(file, 'utf8').replace('denny: [web_fetch]', 'deny: [web_fetch]'));
    await expect.poll(() => warden.config.live.current().version, { timeout: 10_000 }).toBe(version + 1);
    const again = model.requests.length;
    fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> fixed now?` });
    expect(toolNames(await requestFor('fixed now?', again))).not.toContain('web_fetch');
    expect((await audit().list({ typePrefix: 'config.applied' })).at(-1)?.data).toMatchObject({ origin: 'file' });

    // A change to Discord's own block (its token) reconnects it, and only it.
    const identifies = fake.frames.records.filter((f) => f.op === 2).length;
    writeFileSync(file, readFileSync(file, 'utf8').replace('token: test-token', 'token: test-token-2'));
    await expect.poll(() => fake.frames.records.filter((f) => f.op === 2).length, { timeout: 10_000 }).toBe(identifies + 1);
    const later = model.requests.length;
    fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> reconnected?` });
    expect(toolNames(await requestFor('reconnected?', later))).not.toContain('web_fetch');
  }, 30_000);
});
