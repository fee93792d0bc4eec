// A secret set on the host (`warden secrets set` — from a variable, never the command line) and
// granted to one MCP server (`secrets.grants` to `mcp:fix`): the stdio server gets it in its
// environment; the model, which asks the server to print it, reads only its label; a server the
// grant does not name never gets it. `warden secrets list` shows names only; `rm` removes it;
// each step leaves an audit row naming the secret.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { loadConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { mcpManagerFor } from '../../src/mcp/registry.js';
import { secretForms } from '../../src/redact/scrub.js';
import { AuditLog } from '../../src/store/audit.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/mcp/server.mjs');
const VALUE = 'mcp-Gr4nted-V4lue-7Hq2Zp9';
const GUILD = '300000000000000001';
const DEV = '300000000000000003';
const bob = fakeUser('400000000000000002', 'bob');

function respond(r: FakeRequest): FakeReply {
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1)!;
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  if (last.role === 'tool') return { kind: 'reply', text: `Tool said: ${text.slice(0, 800)}` };
  const server = /env of (\w+)/.exec(text)?.[1];
  if (server) return { kind: 'reply', toolCalls: [{ name: `${server}__env`, args: { names: ['MCP_TOKEN'] } }] };
  return { kind: 'reply', text: 'ok' };
}

let fake: DiscordFake;
let model: FakeModelServer;
let warden: RunningWarden;
let dir: string;
const cli = async (...argv: string[]) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main([...argv, '--config', 'warden.config.json5'], { stdout: (t) => out.push(t), stderr: (t) => err.push(t), cwd: dir, env: { GIVEN: VALUE, PATH: process.env.PATH } });
  return { code, out: out.join('\n'), err: err.join('\n') };
};

beforeAll(async () => {
  fake = await startDiscordFake();
  model = await startFakeOpenAI({ respond });
  dir = mkdtempSync(path.join(tmpdir(), 'warden-secret-mcp-'));
  mkdirSync(path.join(dir, 'workspace'));
  writeFileSync(
    path.join(dir, 'warden.config.json5'),
    JSON.stringify({
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: { profile: 'messaging' },
      mcp: { servers: { fix: { command: process.execPath, args: [FIXTURE] }, other: { command: process.execPath, args: [FIXTURE] } } },
      secrets: { grants: [{ name: 'MCP_TOKEN', to: 'mcp:fix' }] },
      channels: { discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { dev: { tools: { allow: ['*'] } } } } } } },
      dataDir: 'data',
    }),
  );
});
afterAll(async () => {
  await warden?.stop();
  await fake?.close();
  await model?.close();
});

describe('a secret set on the host and granted to one MCP server', () => {
  it('warden secrets set refuses a value on the command line, takes one from a variable', async () => {
    const refused = await cli('secrets', 'set', 'MCP_TOKEN', VALUE);
    expect(refused.code).toBe(2);
    const set = await cli('secrets', 'set', 'MCP_TOKEN', '--from-env', 'GIVEN');
    expect(set.code).toBe(0);
    expect(set.out).toContain('MCP_TOKEN set');
    const list = await cli('secrets', 'list');
    expect(list.out).toContain('MCP_TOKEN');
    expect(list.out).toContain('granted to mcp:fix');
    expect(list.out + set.out).not.toContain(VALUE);
  });

  it('the granted server has it; the model reads its label; another server has nothing', async () => {
    const loaded = loadConfig({ file: path.join(dir, 'warden.config.json5'), env: {} });
    if (!loaded.ok) throw loaded.error;
    const from = Date.now();
    const started = await startWarden(loaded.value, { env: { OPENAI_API_KEY: 'test', PATH: process.env.PATH }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    warden = started.warden;
    await fake.frames.waitFor((f) => f.op === 2 && f.at >= from, 10_000, 'IDENTIFY');
    await mcpManagerFor(loaded.value.config)!.ready(15_000);
    const ask = async (text: string) => {
      const mark = fake.requests.records.length;
      fake.userMessage({ author: bob, channelId: DEV, content: `<@${fake.bot.id}> ${text}` });
      const posted = await fake.requests.waitFor((r: RecordedRequest) => fake.requests.records.indexOf(r) >= mark && r.path === `/channels/${DEV}/messages` && String(r.body?.content).includes('Tool said'), 20_000, text);
      return String(posted.body.content);
    };
    // The label stands where the server printed the value: it had it.
    expect(await ask('env of fix')).toContain('[secret:MCP_TOKEN]');
    expect(await ask('env of other')).toContain('null');
    for (const r of model.requests) for (const f of secretForms(VALUE)) expect(JSON.stringify(r.body)).not.toContain(f);
    const used = await new AuditLog(warden.store.db).list({ typePrefix: 'secret.' });
    expect(used.map((e) => e.type)).toEqual(expect.arrayContaining(['secret.set', 'secret.used']));
    expect(JSON.stringify(used)).not.toContain(VALUE);
    await warden.stop();
  });

  it('warden secrets rm removes it; the store file never held the value in clear', async () => {
    const rm = await cli('secrets', 'rm', 'MCP_TOKEN');
    expect(rm.code).toBe(0);
    expect((await cli('secrets', 'list')).out).toContain('no secrets stored');
    const data = path.join(dir, 'data');
    const raw = readdirSync(data).filter((f) => f.startsWith('warden')).map((f) => readFileSync(path.join(data, f)).toString('latin1')).join('');
    for (const f of secretForms(VALUE)) expect(raw).not.toContain(f);
    expect(raw).toContain('secret.deleted');
  });
});
