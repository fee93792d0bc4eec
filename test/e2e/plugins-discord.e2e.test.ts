// A plugin's tool end to end: Warden starts with the shipped incidents and exec-guard plugins
// (and one that crashes while loading), a member asks in #dev, the model (a loopback
// OpenAI-compatible fake driven by the real SDK) calls incident_create, the plugin calls the
// tracker (a loopback fake) and the answer comes back through the real discord.js adapter. In
// #general, whose policy denies group:plugins, the model is never offered the tool and the
// plugin's /incident command cannot reach it.
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import { type FakeModelServer, type FakeReply, type FakeRequest, lastUserText, toolNames } from '../fakes/models/server.js';

const SHIPPED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../plugins');
const GUILD = '300000000000000001';
const GENERAL = '300000000000000002';
const DEV = '300000000000000003';
const bob = fakeUser('400000000000000002', 'bob');

let fake: DiscordFake;
let model: FakeModelServer;
let tracker: Server;
let trackerUrl: string;
const created: Array<{ auth?: string; body: Record<string, unknown> }> = [];
let warden: RunningWarden;
let journal: string;


function respond(r: FakeRequest): FakeReply {
  const last = r.body.messages.at(-1);
  if (last?.role === 'tool') return { kind: 'reply', text: `Tracker says: ${String(last.content).includes('INC-7') ? 'opened INC-7' : 'something else'}` };
  if (lastUserText(r).includes('open an incident')) {
    return toolNames(r).includes('incident_create')
      ? { kind: 'reply', toolCalls: [{ name: 'incident_create', args: { title: 'checkout is down', severity: 'sev2' } }] }
      : { kind: 'reply', text: 'I have no incident tool here.' };
  }
  return { kind: 'reply', text: 'ok' };
}

beforeAll(async () => {
  tracker = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
    if (req.method === 'POST') created.push({ auth: req.headers.authorization, body });
    res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(req.method === 'POST' ? { id: 'INC-7', status: 'investigating', ...body } : []));
  });
  await new Promise<void>((r) => tracker.listen(0, '127.0.0.1', r));
  trackerUrl = `http://127.0.0.1:${(tracker.address() as AddressInfo).port}`;
  fake = await startDiscordFake();
  model = await startFakeOpenAI({ respond });

  const dir = mkdtempSync(path.join(tmpdir(), 'warden-plugins-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  // A third plugin that throws while its module loads: it declares no policy hook, so it is reported, skipped, Warden starts.
  mkdirSync(path.join(dir, 'broken', 'crasher'), { recursive: true });
  writeFileSync(path.join(dir, 'broken', 'crasher', 'warden.plugin.json'), JSON.stringify({ id: 'crasher', contracts: { tools: ['crash_tool'], hooks: [] }, toolMetadata: { crash_tool: { profiles: ['messaging'] } } }));
  writeFileSync(path.join(dir, 'broken', 'crasher', 'index.mjs'), 'throw new Error("crasher cannot start");');
  // An observer of the lifecycle, writing what it saw where the test can read it.
  journal = path.join(dir, 'journal.log');
  mkdirSync(path.join(dir, 'broken', 'observer'), { recursive: true });
  writeFileSync(path.join(dir, 'broken', 'observer', 'warden.plugin.json'), JSON.stringify({ id: 'observer' }));
  writeFileSync(
    path.join(dir, 'broken', 'observer', 'index.mjs'),
    `import { appendFileSync } from 'node:fs';
const note = (line) => appendFileSync(${JSON.stringify(path.join(dir, 'journal.log'))}, line + '\\n');
export function register(api) {
  for (const hook of ['gateway_start', 'gateway_stop', 'session_start', 'message_received', 'message_sent', 'model_call_ended']) api.on(hook, (e) => note(hook));
  api.on('after_tool_call', (e) => note('after_tool_call ' + e.toolName));
}`,
  );
  const parsed = parseConfig({
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'messaging' },
    plugins: {
      paths: [SHIPPED, 'broken'],
      entries: {
        incidents: { config: { baseUrl: trackerUrl, token: 'tracker-secret' } },
        'exec-guard': { config: { rules: [{ pattern: 'prod', action: 'deny' }] } },
      },
    },
    channels: {
      discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { general: { tools: { deny: ['group:plugins'] } }, dev: { tools: { alsoAllow: ['incidents'] } } } } } },
    },
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
  await new Promise<void>((r) => (tracker ? tracker.close(() => r()) : r()));
});

const botPostIn = (channelId: string, text: string) =>
  fake.requests.waitFor((r) => r.method === 'POST' && r.path === `/channels/${channelId}/messages` && String(r.body?.content ?? '').includes(text), 10_000, text);

describe('a plugin tool from a Discord channel', () => {
  it('is called end to end in #dev, with the sender and channel from Warden\'s context', async () => {
    const before = model.requests.length;
    fake.userMessage({ author: bob, channelId: DEV, content: `<@${fake.bot.id}> please open an incident: checkout is down` });
    await botPostIn(DEV, 'Tracker says: opened INC-7');
    expect(toolNames(model.requests[before]!)).toContain('incident_create');
    expect(created.at(-1)).toEqual({ auth: 'Bearer tracker-secret', body: { title: 'checkout is down', severity: 'sev2', summary: '', reportedBy: `discord:${bob.id}`, reportedIn: '#dev' } });
    // What the tool returned reached the model as untrusted data.
    const toolMessage = (model.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'tool')!;
    expect(toolMessage.content).toMatch(/^<untrusted-[0-9a-f]+ source="tool:incident_create">/);
  });

  it('is never offered in #general, whose policy denies group:plugins', async () => {
    const before = model.requests.length;
    const posts = created.length;
    fake.userMessage({ author: bob, channelId: GENERAL, content: `<@${fake.bot.id}> please open an incident: checkout is down` });
    await botPostIn(GENERAL, 'I have no incident tool here.');
    const offered = model.requests.slice(before).flatMap(toolNames);
    expect(offered.some((t) => t.startsWith('incident_'))).toBe(false);
    expect(created.length).toBe(posts);
  });

  it('/tools in #general names the deny that removed it; the plugin command cannot reach it there', async () => {
    fake.userMessage({ author: bob, channelId: GENERAL, content: `<@${fake.bot.id}> /tools` });
    const tools = await botPostIn(GENERAL, 'Not here:');
    expect(String(tools.body.content)).toContain(`incident_create — removed by channels.discord.guilds.${GUILD}.channels.general.tools.deny`);
    fake.userMessage({ author: bob, channelId: GENERAL, content: `<@${fake.bot.id}> /incident` });
    await botPostIn(GENERAL, 'Cannot list incidents here');
    fake.userMessage({ author: bob, channelId: DEV, content: `<@${fake.bot.id}> /incident` });
    await botPostIn(DEV, 'No open incidents.');
  });

  it('started although a plugin crashed while loading', async () => {
    fake.userMessage({ author: bob, channelId: DEV, content: `<@${fake.bot.id}> /tools` });
    const tools = await botPostIn(DEV, 'Your tools here');
    expect(String(tools.body.content)).toContain('crash_tool — unavailable: plugin crasher did not load: entry module index.mjs failed to load: crasher cannot start');
  });
  it('observer hooks saw the lifecycle, the messages and the tool call; gateway_stop runs on stop', async () => {
    await warden.stop();
    const lines = readFileSync(journal, 'utf8').split('\n');
    for (const hook of ['gateway_start', 'session_start', 'message_received', 'message_sent', 'model_call_ended', 'after_tool_call incident_create', 'gateway_stop']) expect(lines, hook).toContain(hook);
    expect(lines.at(-2)).toBe('gateway_stop');
  });

});
