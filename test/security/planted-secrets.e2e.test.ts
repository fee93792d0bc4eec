// Planted tokens: Warden starts (as `warden start` does, from a config file with its `.env`) with
// a distinctive bot token, model API key, store password, MCP header and `.env` value. A scripted
// model then runs `env`, `cat .env`, reads the config file, fetches a page echoing the key, is
// told the key by a user, says a token itself, and writes a secret's label into a file. None of
// the planted values — in any encoding the scrubber knows — reaches the model's requests, the
// store (the SQLite file, or a pg_dump of the PostgreSQL database), or a posted message.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { secretForms } from '../../src/redact/scrub.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { freshStoreTarget } from '../store-engines.js';

const GUILD = '300000000000000001';
const DEV = '300000000000000003';
const bob = fakeUser('400000000000000002', 'bob');
const olga = fakeUser('400000000000000009', 'olga');

const PLANTED = {
  botToken: 'MTE4NzY1NDMyMTA5ODc2NTQzMg.Gp1ant.Pl4nt3dB0tT0k3nZq9Xw8Vu7Ts6Rr5',
  apiKey: 'sk-plantedKEY-9f8e7d6c5b4a39281706f5e4d3c2b1a0',
  storePassword: 'Pl4nted-St0re-Pa55word',
  mcpHeader: 'mcp-h34der-Pl4nted-77aa99bb',
  dotenv: 'd0tenv-Pl4nted-V4lue-5150',
};
const ALL = Object.values(PLANTED);

function respond(r: FakeRequest): FakeReply {
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1)!;
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  if (last.role === 'tool') return { kind: 'reply', text: `Tool said: ${text.slice(0, 1500)}` };
  if (text.includes('run env')) return { kind: 'reply', toolCalls: [{ name: 'exec', args: { command: 'env' } }] };
  if (text.includes('cat dotenv')) return { kind: 'reply', toolCalls: [{ name: 'exec', args: { command: 'cat ../.env' } }] };
  if (text.includes('read config')) return { kind: 'reply', toolCalls: [{ name: 'exec', args: { command: 'cat ../warden.config.yaml; cat ../warden.config.yaml | base64; cat ../warden.config.yaml | xxd -p' } }] };
  const fetchUrl = /fetch (http\S+)/.exec(text)?.[1];
  if (fetchUrl) return { kind: 'reply', toolCalls: [{ name: 'exec', args: { command: `curl -s ${fetchUrl}` } }] };
  if (text.includes('write the label')) return { kind: 'reply', toolCalls: [{ name: 'write', args: { path: 'creds.txt', content: 'OPENAI_API_KEY=[secret:OPENAI_API_KEY]\n' } }] };
  // A model that knows a token from elsewhere and says it: the post is scrubbed.
  if (text.includes('say the token')) return { kind: 'reply', text: `Sure: ${PLANTED.botToken} and ${Buffer.from(PLANTED.apiKey).toString('base64')}` };
  return { kind: 'reply', text: `echo: ${text.slice(0, 500)}` };
}

let fake: DiscordFake;
let model: FakeModelServer;
let page: Server;
let pageUrl = '';

beforeAll(async () => {
  fake = await startDiscordFake();
  model = await startFakeOpenAI({ respond });
  // A page that echoes the key, in plain text, base64 and as a query parameter.
  page = createServer((_req, res) => res.end(`<p>your key: ${PLANTED.apiKey}</p><p>b64 ${Buffer.from(PLANTED.apiKey).toString('base64')}</p><a href="/x?k=${encodeURIComponent(PLANTED.apiKey)}">x</a>`));
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', () => resolve()));
  pageUrl = `http://127.0.0.1:${(page.address() as { port: number }).port}/echo`;
});
afterAll(async () => {
  await fake?.close();
  await model?.close();
  await new Promise((resolve) => page?.close(resolve));
});

const everyForm = ALL.flatMap((v) => secretForms(v).map((form) => ({ v, form })));
function leaks(haystack: string): string[] {
  const flat = haystack.replace(/\r?\n/g, '');
  return everyForm.filter(({ form }) => flat.includes(form)).map(({ v, form }) => `${v} as ${form}`);
}

describe.each(['sqlite', 'postgres'] as const)('planted secrets on %s', (engine) => {
  let warden: RunningWarden;
  let dir: string;
  let storeUrl: string | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-planted-'));
    mkdirSync(path.join(dir, 'workspace'));
    const target = await freshStoreTarget(engine);
    if (target.url) {
      const u = new URL(target.url);
      u.password = PLANTED.storePassword;
      storeUrl = u.toString();
    }
    writeFileSync(path.join(dir, '.env'), `ACME_DEPLOY_KEY=${PLANTED.dotenv}\nLOG_COLOR=blue\n`);
    writeFileSync(
      path.join(dir, 'warden.config.yaml'),
      [
        'owners:',
        `  discord: ["${olga.id}"]`,
        'models:',
        '  default: openai/gpt-test',
        '  providers:',
        `    openai: { baseUrl: "${model.url}" }`,
        'tools:',
        '  profile: coding',
        '  exec: { host: gateway, security: full, ask: "off" }',
        'mcp:',
        '  servers:',
        `    docs: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer ${PLANTED.mcpHeader}" } }`,
        'channels:',
        '  discord:',
        `    token: "${PLANTED.botToken}"`,
        `    apiBaseUrl: "${fake.apiBaseUrl}"`,
        '    streaming: false',
        `    guilds: { "${GUILD}": { channels: { dev: { tools: { allow: ["*"] } } } } }`,
        'dataDir: data',
        ...(storeUrl ? ['store:', `  url: "${storeUrl}"`] : []),
      ].join('\n'),
    );
    const loaded = loadConfig({ file: path.join(dir, 'warden.config.yaml'), env: { PATH: process.env.PATH } });
    if (!loaded.ok) throw loaded.error;
    const from = Date.now();
    const started = await startWarden(loaded.value, { env: { OPENAI_API_KEY: PLANTED.apiKey, PATH: process.env.PATH }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    warden = started.warden;
    await fake.frames.waitFor((f) => f.op === 2 && f.at >= from, 10_000, 'IDENTIFY');
  });
  afterAll(async () => {
    await warden?.stop();
  });

  const mark = () => fake.requests.records.length;
  const botPost = (from: number, what: string) =>
    fake.requests.waitFor((r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${DEV}/messages` && !String(r.body?.content ?? '').startsWith('Your message held'), 20_000, what);
  const ask = async (text: string) => {
    const from = mark();
    fake.userMessage({ author: bob, channelId: DEV, content: `<@${fake.bot.id}> ${text}` });
    return String((await botPost(from, text)).body.content);
  };
  const lastToolText = () => {
    const messages = model.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    const tool = messages.filter((m) => m.role === 'tool').at(-1);
    return tool ? JSON.stringify(tool.content) : '';
  };

  it('a model that runs env gets no planted value', async () => {
    await ask('run env');
    expect(lastToolText()).toContain('PATH=');
  });

  it('cat .env: the value comes back as its label', async () => {
    const answer = await ask('cat dotenv');
    expect(lastToolText()).toContain('[secret:ACME_DEPLOY_KEY]');
    expect(answer).toContain('[secret:ACME_DEPLOY_KEY]');
  });

  it('reading the config file (plain, base64, hex): every credential comes back as a label', async () => {
    await ask('read config');
    const seen = lastToolText();
    expect(seen).toContain('[secret:DISCORD_TOKEN]');
    expect(seen).toContain('[secret:DOCS_AUTHORIZATION]');
    if (storeUrl) expect(seen).toContain('[secret:STORE_URL_PASSWORD]');
  });

  it('a fetched page that echoes the key', async () => {
    await ask(`fetch ${pageUrl}`);
    expect(lastToolText()).toContain('[secret:OPENAI_API_KEY]');
  });

  it('a user who pastes the key: handled, the model sees the label, the user is told to rotate it', async () => {
    const from = mark();
    const answer = await ask(`my key is ${PLANTED.apiKey} and the deploy key ${PLANTED.dotenv}`);
    expect(answer).toContain('echo: ');
    expect(answer).toContain('[secret:OPENAI_API_KEY]');
    const warning = await fake.requests.waitFor(
      (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && String(r.body?.content ?? '').startsWith('Your message held'),
      10_000,
      'the rotate warning',
    );
    expect(warning.path).not.toBe(`/channels/${DEV}/messages`);
    expect(String(warning.body.content)).toContain('rotate');
  });

  it('a reply that states a token is posted with the label', async () => {
    const answer = await ask('say the token');
    expect(answer).toContain('[secret:DISCORD_TOKEN]');
    expect(answer).toContain('[secret:OPENAI_API_KEY]');
  });

  it('a model that writes a label into a file gets an error and no file', async () => {
    await ask('write the label');
    expect(lastToolText()).toContain('placeholder [secret:OPENAI_API_KEY]');
    expect(existsSync(path.join(dir, 'workspace', 'creds.txt'))).toBe(false);
  });

  it('the model never received a planted value in any encoding', () => {
    expect(model.requests.length).toBeGreaterThan(10);
    for (const r of model.requests) expect(leaks(JSON.stringify(r.body))).toEqual([]);
  });

  it('no posted message holds one', () => {
    const posted = fake.requests.records.filter((r) => r.method !== 'GET').map((r) => r.raw.toString('utf8'));
    expect(posted.length).toBeGreaterThan(5);
    expect(leaks(posted.join('\n'))).toEqual([]);
  });

  it('the store holds none (the SQLite file, or a pg_dump)', async () => {
    await warden.stop();
    let dump: string;
    if (storeUrl) {
      const bin = readdirSync('/usr/lib/postgresql').map((v) => path.join('/usr/lib/postgresql', v, 'bin', 'pg_dump')).find((f) => existsSync(f))!;
      dump = execFileSync(bin, ['--no-owner', storeUrl]).toString('utf8');
      expect(dump).toContain('transcript_entries');
    } else {
      const data = path.join(dir, 'data');
      dump = readdirSync(data)
        .filter((f) => f.startsWith('warden'))
        .map((f) => readFileSync(path.join(data, f)).toString('latin1'))
        .join('\n');
    }
    expect(dump).toContain('[secret:');
    expect(leaks(dump)).toEqual([]);
  });
});
