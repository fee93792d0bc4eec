// An MCP server's tools end to end: Warden starts with a real MCP server (the SDK's server side,
// a stdio child) and the real discord.js adapter on the loopback fake; the scripted model (the
// OpenAI-compatible fake through the real SDK) calls the server's tools through the whole call
// chain. In #general, whose policy denies bundle-mcp, no MCP tool is offered; a tool the server
// marks destructive raises an approval card showing its annotations; one it marks read-only runs
// without one.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalAction } from '../../adapters/common/approval-card.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { mcpManagerFor } from '../../src/mcp/registry.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/mcp/server.mjs');
const GUILD = '300000000000000001';
const GENERAL = '300000000000000002';
const DEV = '300000000000000003';
const bob = fakeUser('400000000000000002', 'bob');
const olga = fakeUser('400000000000000009', 'olga');

let fake: DiscordFake;
let model: FakeModelServer;
let warden: RunningWarden;
let serverLog: string;

const messages = (r: FakeRequest) => r.body.messages as Array<{ role: string; content: unknown }>;
const text = (c: unknown) => (typeof c === 'string' ? c : JSON.stringify(c));
const lastUserText = (r: FakeRequest) => text(messages(r).filter((m) => m.role === 'user').at(-1)?.content);
const toolNames = (r: FakeRequest): string[] => ((r.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);

function respond(r: FakeRequest): FakeReply {
  const last = messages(r).at(-1)!;
  if (last.role === 'tool') return { kind: 'reply', text: `Tool said: ${text(last.content).slice(0, 400)}` };
  const asked = lastUserText(r);
  if (asked.includes('echo')) return toolNames(r).includes('fix__echo') ? { kind: 'reply', toolCalls: [{ name: 'fix__echo', args: { text: 'hello from discord' } }] } : { kind: 'reply', text: 'No MCP tools here.' };
  if (asked.includes('bad args')) return { kind: 'reply', toolCalls: [{ name: 'fix__echo', args: { txt: 1 } }] };
  if (asked.includes('delete')) return { kind: 'reply', toolCalls: [{ name: 'fix__delete_repo', args: { repo: 'acme/web' } }] };
  return { kind: 'reply', text: 'ok' };
}

beforeAll(async () => {
  fake = await startDiscordFake();
  model = await startFakeOpenAI({ respond });
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-mcp-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  serverLog = path.join(dir, 'mcp.log');
  const parsed = parseConfig({
    owners: { discord: [olga.id] },
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'messaging' },
    mcp: { servers: { fix: { command: process.execPath, args: [FIXTURE], env: { MCP_FIXTURE_LOG: serverLog } } } },
    channels: {
      discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { general: { tools: { deny: ['bundle-mcp'] } }, dev: { tools: { deny: ['fix__wait'] } } } } } },
    },
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test', PATH: process.env.PATH }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  warden = started.warden;
  await fake.frames.waitFor((f) => f.op === 2, 5_000, 'IDENTIFY');
  await mcpManagerFor(parsed.value.config)!.ready(10_000);
});
afterAll(async () => {
  await warden?.stop();
  await fake?.close();
  await model?.close();
});

const mark = () => fake.requests.records.length;
const botPost = (channelId: string, from: number, pred: (body: any) => boolean, what: string) =>
  fake.requests.waitFor((r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${channelId}/messages` && pred(r.body), 10_000, what);
const says = (t: string) => (b: any) => typeof b.content === 'string' && b.content.includes(t);
const ask = (channelId: string, t: string) => fake.userMessage({ author: bob, channelId, content: `<@${fake.bot.id}> ${t}` });
const buttons = (m: APIMessage) => (m.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);

describe('an MCP server from a Discord channel', () => {
  it('a read-only tool is called through the chain from a turn; its result reaches the model as untrusted data', async () => {
    const before = model.requests.length;
    const from = mark();
    ask(DEV, 'please echo something');
    await botPost(DEV, from, says('Tool said:'), 'the answer');
    expect(toolNames(model.requests[before]!)).toEqual(expect.arrayContaining(['fix__echo', 'fix__delete_repo']));
    // The channel's deny of one MCP tool holds like any tool's.
    expect(toolNames(model.requests[before]!)).not.toContain('fix__wait');
    const tool = messages(model.requests.at(-1)!).find((m) => m.role === 'tool')!;
    expect(text(tool.content)).toMatch(/^<untrusted-[0-9a-f]+ source="tool:fix__echo">/);
    expect(text(tool.content)).toContain('echo: hello from discord');
    expect(readFileSync(serverLog, 'utf8')).toContain('call echo {"text":"hello from discord"}');
    // No card for a read-only tool.
    expect(fake.botMessagesIn(DEV).some((m) => buttons(m).length > 0)).toBe(false);
  });

  it('arguments that do not fit the server\'s input schema never reach it: the model gets the schema error', async () => {
    const from = mark();
    ask(DEV, 'call it with bad args');
    const answer = await botPost(DEV, from, says('Tool said:'), 'the answer');
    expect(answer.body.content).toMatch(/text|txt/);
    expect(readFileSync(serverLog, 'utf8')).not.toContain('"txt"');
  });

  it('a destructive tool raises an approval card with its annotations; after the click it runs', async () => {
    const from = mark();
    ask(DEV, 'delete the repo acme/web');
    await botPost(DEV, from, (b) => Array.isArray(b.components) && b.components.length > 0, 'approval card');
    const card = fake.botMessagesIn(DEV).filter((m) => buttons(m).length > 0).at(-1)!;
    const embed = JSON.stringify(card.embeds);
    expect(embed).toContain('destructiveHint: true');
    expect(embed).toContain('fix (stdio)');
    expect(readFileSync(serverLog, 'utf8')).not.toContain('call delete_repo');
    fake.click({ message: card, customId: buttons(card).find((id) => decodeApprovalAction(id)?.decision === 'allow-once')!, user: olga });
    await botPost(DEV, from, says('deleted acme/web'), 'the result');
    expect(readFileSync(serverLog, 'utf8')).toContain('call delete_repo {"repo":"acme/web"}');
  });

  it('is never offered in #general, whose policy denies bundle-mcp; /tools says which entry removed it', async () => {
    const before = model.requests.length;
    let from = mark();
    ask(GENERAL, 'please echo something');
    await botPost(GENERAL, from, says('No MCP tools here.'), 'the refusal');
    expect(model.requests.slice(before).flatMap(toolNames).some((t) => t.startsWith('fix__'))).toBe(false);
    from = mark();
    ask(GENERAL, '/tools');
    const tools = await botPost(GENERAL, from, says('Not here:'), '/tools');
    expect(String(tools.body.content)).toContain(`fix__echo — removed by channels.discord.guilds.${GUILD}.channels.general.tools.deny`);
  });
});
