// Collects the tool lists of real MCP servers published on npm into catalog.json,
// the catalog over which the tool-search requests (tune.jsonl, heldout.jsonl) are labelled.
//
// This is a one-off data-gathering script: no test or benchmark runs it, and it needs
// the npm registry. Re-run it by hand from the repository root:
//
//   node bench/data/tool-search/collect.mjs [--scratch DIR] [--only id1,id2]
//
// For every server below it installs the package (pinned version) into its own folder
// under the scratch dir (default: $TMPDIR/mcp-collect/pkgs; never inside the repo),
// starts its bin over stdio with the MCP SDK client and pages through tools/list.
// Servers that refuse to start without credentials get dummy tokens (no call ever
// reaches a real account: only tools/list is sent). With --only, the named servers are
// re-collected and merged into the existing catalog.json. A server is capped at `cap`
// tools (first N in its own order) so no single domain dominates the catalog.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';

const here = dirname(fileURLToPath(import.meta.url));
const OUT = join(here, 'catalog.json');
const DEFAULT_CAP = 200;
const DUMMY = 'dummy-token-for-listing-only';

// Google-based servers refuse to start without an OAuth client file (and Gmail without a
// token file); placeholders let them start and list their tools without signing in.
const OAUTH_KEYS = join(tmpdir(), 'mcp-collect-gcp-oauth.keys.json');
const OAUTH_TOKEN = join(tmpdir(), 'mcp-collect-gcp-token.json');
function writeOauthPlaceholders() {
  const client = { client_id: 'placeholder.apps.googleusercontent.com', client_secret: 'placeholder', project_id: 'placeholder', auth_uri: 'https://accounts.google.com/o/oauth2/auth', token_uri: 'https://oauth2.googleapis.com/token', redirect_uris: ['http://localhost'] };
  writeFileSync(OAUTH_KEYS, JSON.stringify({ installed: client }));
  writeFileSync(OAUTH_TOKEN, JSON.stringify({ access_token: DUMMY, refresh_token: DUMMY, token_type: 'Bearer', expiry_date: 4102444800000 }));
}

// Tried and left out (they do not list tools offline): @modelcontextprotocol/server-gdrive
// (needs a signed-in Google token), @supabase/mcp-server-supabase and @upstash/mcp-server
// (call their APIs while listing), @heroku/mcp-server (fails to load its SDK on Node 20),
// @railway/mcp-server (a proxy for the railway CLI), mcp-atlassian and
// @a-bonus/google-docs-mcp (crash on start); the newest @stripe/mcp proxies a remote
// server, so the last version with local tool definitions is pinned.
//
// id: short lowercase namespace used in tool names (`<id>__<tool>`).
// args/env: what the server needs to start and list its tools.
export const SERVERS = [
  { id: 'github', pkg: '@modelcontextprotocol/server-github', version: '2025.4.8', env: { GITHUB_PERSONAL_ACCESS_TOKEN: DUMMY } },
  { id: 'gitlab', pkg: '@modelcontextprotocol/server-gitlab', version: '2025.4.25', env: { GITLAB_PERSONAL_ACCESS_TOKEN: DUMMY, GITLAB_API_URL: 'http://127.0.0.1:9/api/v4' } },
  { id: 'slack', pkg: '@modelcontextprotocol/server-slack', version: '2025.4.25', env: { SLACK_BOT_TOKEN: 'xoxb-' + DUMMY, SLACK_TEAM_ID: 'T00000000' } },
  { id: 'postgres', pkg: '@modelcontextprotocol/server-postgres', version: '0.6.2', args: ['postgresql://user:pw@127.0.0.1:9/db'] },
  { id: 'filesystem', pkg: '@modelcontextprotocol/server-filesystem', version: '2026.8.31', args: [tmpdir()] },
  { id: 'memory', pkg: '@modelcontextprotocol/server-memory', version: '2026.8.31', env: { MEMORY_FILE_PATH: join(tmpdir(), 'mcp-collect-memory.json') } },
  { id: 'puppeteer', pkg: '@modelcontextprotocol/server-puppeteer', version: '2025.5.12' },
  { id: 'gmaps', pkg: '@modelcontextprotocol/server-google-maps', version: '0.6.2', env: { GOOGLE_MAPS_API_KEY: DUMMY } },
  { id: 'brave', pkg: '@modelcontextprotocol/server-brave-search', version: '0.6.2', env: { BRAVE_API_KEY: DUMMY } },
  // Connects to Redis before serving: its static tool list is read from the package source.
  { id: 'redis', pkg: '@modelcontextprotocol/server-redis', version: '2025.4.25', source: { file: 'dist/index.js', marker: 'tools: [' } },
  { id: 'notion', pkg: '@notionhq/notion-mcp-server', version: '2.5.2', env: { NOTION_TOKEN: 'ntn_' + DUMMY } },
  { id: 'stripe', pkg: '@stripe/mcp', version: '0.2.5', args: ['--tools=all', '--api-key=sk_test_' + 'x'.repeat(24)] },
  { id: 'sentry', pkg: '@sentry/mcp-server', version: '0.36.0', args: ['--access-token=' + DUMMY], env: { SENTRY_ACCESS_TOKEN: DUMMY } },
  { id: 'playwright', pkg: '@playwright/mcp', version: '0.0.86', args: ['--headless'] },
  { id: 'cloudflare', pkg: '@cloudflare/mcp-server-cloudflare', version: '0.2.0', args: ['run', '00000000000000000000000000000000'], env: { CLOUDFLARE_API_TOKEN: DUMMY } },
  { id: 'hubspot', pkg: '@hubspot/mcp-server', version: '0.4.0', env: { PRIVATE_APP_ACCESS_TOKEN: DUMMY } },
  { id: 'mongodb', pkg: 'mongodb-mcp-server', version: '3.0.4', env: { MDB_MCP_CONNECTION_STRING: 'mongodb://127.0.0.1:9/db', MDB_MCP_API_CLIENT_ID: DUMMY, MDB_MCP_API_CLIENT_SECRET: DUMMY, MDB_MCP_TELEMETRY: 'disabled' } },
  { id: 'elastic', pkg: '@elastic/mcp-server-elasticsearch', version: '0.3.1', env: { ES_URL: 'http://127.0.0.1:9', ES_API_KEY: DUMMY } },
  { id: 'azure', pkg: '@azure/mcp', version: '2.0.5', args: ['server', 'start'] },
  { id: 'shopify', pkg: '@shopify/dev-mcp', version: '1.16.0' },
  { id: 'twilio', pkg: '@twilio-alpha/mcp', version: '0.7.0', args: ['AC' + '0'.repeat(32) + '/SK' + '0'.repeat(32) + ':' + DUMMY] },
  { id: 'k8s', pkg: 'mcp-server-kubernetes', version: '4.1.7' },
  { id: 'jira', pkg: '@aashari/mcp-server-atlassian-jira', version: '3.3.0', env: { ATLASSIAN_SITE_NAME: 'example', ATLASSIAN_USER_EMAIL: 'nobody@example.com', ATLASSIAN_API_TOKEN: DUMMY } },
  { id: 'linear', pkg: '@tacticlaunch/mcp-linear', version: '1.4.3', env: { LINEAR_API_TOKEN: 'lin_api_' + DUMMY } },
  { id: 'datadog', pkg: '@winor30/mcp-server-datadog', version: '1.8.0', env: { DATADOG_API_KEY: DUMMY, DATADOG_APP_KEY: DUMMY } },
  { id: 'grafana', pkg: '@leval/mcp-grafana', version: '1.1.7', env: { GRAFANA_URL: 'http://127.0.0.1:9', GRAFANA_API_KEY: DUMMY, GRAFANA_SERVICE_ACCOUNT_TOKEN: DUMMY } },
  { id: 'gcal', pkg: '@cocal/google-calendar-mcp', version: '2.6.3', env: { GOOGLE_OAUTH_CREDENTIALS: OAUTH_KEYS, GOOGLE_CALENDAR_MCP_TOKEN_PATH: OAUTH_TOKEN } },
  { id: 'circleci', pkg: '@circleci/mcp-server-circleci', version: '0.20.0', env: { CIRCLECI_TOKEN: DUMMY } },
  { id: 'asana', pkg: '@roychri/mcp-server-asana', version: '1.8.0', env: { ASANA_ACCESS_TOKEN: DUMMY } },
  { id: 'paddle', pkg: '@paddle/paddle-mcp', version: '0.1.6', args: ['--api-key=pdl_sdbx_apikey_' + DUMMY, '--environment=sandbox'], env: { PADDLE_API_KEY: 'pdl_sdbx_apikey_' + DUMMY } },
  { id: 'airtable', pkg: 'airtable-mcp-server', version: '1.14.0', env: { AIRTABLE_API_KEY: 'pat' + DUMMY } },
  { id: 'netlify', pkg: '@netlify/mcp', version: '1.15.1' },
  { id: 'terraform', pkg: 'terraform-mcp-server', version: '0.13.0' },
  { id: 'gmail', pkg: '@gongrzhe/server-gmail-autoauth-mcp', version: '1.1.11', env: { GMAIL_OAUTH_PATH: OAUTH_KEYS, GMAIL_CREDENTIALS_PATH: OAUTH_TOKEN } },
  { id: 'discord', pkg: 'mcp-discord', version: '1.3.4', env: { DISCORD_TOKEN: DUMMY } },
  { id: 'figma', pkg: 'figma-developer-mcp', version: '0.13.2', args: ['--stdio', '--figma-api-key=' + DUMMY] },
  { id: 'gdrive2', pkg: '@piotr-agier/google-drive-mcp', version: '2.10.0', env: { GOOGLE_DRIVE_OAUTH_CREDENTIALS: OAUTH_KEYS, GOOGLE_DRIVE_MCP_TOKEN_PATH: OAUTH_TOKEN } },
  { id: 'vercel', pkg: 'vercel-mcp', version: '0.0.7', args: ['VERCEL_API_KEY=' + DUMMY], env: { VERCEL_API_KEY: DUMMY } },
];

function argValue(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function install(dir, pkg, version) {
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
  const spec = version ? `${pkg}@${version}` : pkg;
  const r = spawnSync('npm', ['i', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', spec], { cwd: dir, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`npm i ${spec} failed`);
}

function binOf(dir, pkg) {
  const pj = JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8'));
  const bin = typeof pj.bin === 'string' ? pj.bin : pj.bin && Object.values(pj.bin)[0];
  if (!bin) throw new Error(`${pkg} has no bin`);
  return { path: resolve(dir, 'node_modules', pkg, bin), version: pj.version };
}

// Reads a tool array written as a literal in a package's source: finds `marker`, takes
// the bracketed literal after it (skipping string contents) and evaluates it alone.
function toolsFromSource(dir, server) {
  const text = readFileSync(join(dir, 'node_modules', server.pkg, server.source.file), 'utf8');
  const at = text.indexOf(server.source.marker);
  if (at < 0) throw new Error(`marker not found in ${server.source.file}`);
  const start = text.indexOf('[', at);
  let depth = 0;
  let quote = null;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      depth--;
      if (depth === 0) return new Function(`return ${text.slice(start, i + 1)};`)();
    }
  }
  throw new Error('unterminated tool list');
}

async function listTools(server, binPath, cwd) {
  const transport = new StdioClientTransport({
    cwd,
    command: process.execPath,
    args: [binPath, ...(server.args ?? [])],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DO_NOT_TRACK: '1', ...(server.env ?? {}) },
    stderr: process.argv.includes('--debug') ? 'inherit' : 'ignore',
  });
  const client = new Client({ name: 'tool-search-catalog', version: '1.0.0' });
  const timer = setTimeout(() => transport.close(), 60_000);
  try {
    await client.connect(transport);
    const tools = [];
    let cursor;
    do {
      // Raw tools/list: a few servers publish schemas the SDK's strict result check
      // rejects (e.g. an inputSchema without "type"); the catalog records them as published.
      const page = await client.request(
        { method: 'tools/list', params: cursor ? { cursor } : {} },
        z.object({ tools: z.array(z.looseObject({ name: z.string() })), nextCursor: z.string().optional() }).loose(),
      );
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
  }
}

// Schemas keep their structure; long prose inside them is trimmed so the catalog stays small.
function compactSchema(schema, depth = 0) {
  if (Array.isArray(schema)) return schema.map((s) => compactSchema(s, depth + 1));
  if (!schema || typeof schema !== 'object') return schema;
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'description' && typeof v === 'string') out[k] = v.length > 200 ? v.slice(0, 197) + '...' : v;
    else if (k === '$schema' || k === 'examples') continue;
    else out[k] = depth > 6 ? v : compactSchema(v, depth + 1);
  }
  return out;
}

async function main() {
  writeOauthPlaceholders();
  const scratch = argValue('--scratch') ?? join(tmpdir(), 'mcp-collect', 'pkgs');
  const only = argValue('--only')?.split(',');
  const previous = only && existsSync(OUT) ? JSON.parse(readFileSync(OUT, 'utf8')) : { servers: [], tools: [] };
  const servers = previous.servers.filter((s) => !only || !only.includes(s.id));
  const tools = previous.tools.filter((t) => !only || !only.includes(t.server));
  for (const server of SERVERS) {
    if (only && !only.includes(server.id)) continue;
    const dir = join(scratch, server.id);
    try {
      if (!existsSync(join(dir, 'node_modules', server.pkg))) install(dir, server.pkg, server.version);
      const bin = binOf(dir, server.pkg);
      const listed = server.source ? toolsFromSource(dir, server) : await listTools(server, bin.path, dir);
      const kept = listed.slice(0, server.cap ?? DEFAULT_CAP);
      servers.push({ id: server.id, package: server.pkg, version: bin.version, method: server.source ? 'source' : 'listTools', listed: listed.length, kept: kept.length });
      for (const t of kept) {
        tools.push({ name: `${server.id}__${t.name}`, server: server.id, description: (t.description ?? '').trim().split(dir).join('<server directory>'), inputSchema: compactSchema(t.inputSchema ?? { type: 'object' }) });
      }
      process.stderr.write(`${server.id}: ${kept.length}/${listed.length} tools\n`);
    } catch (err) {
      process.stderr.write(`${server.id}: FAILED ${err?.message ?? err}\n`);
    }
  }
  const seen = new Set();
  for (const t of tools) {
    if (seen.has(t.name)) throw new Error(`duplicate tool name ${t.name}`);
    seen.add(t.name);
  }
  servers.sort((a, b) => a.id.localeCompare(b.id));
  const catalog = { generatedAt: new Date().toISOString(), servers, tools };
  // One server or tool per line: compact, yet a re-collection diffs line by line.
  const lines = (items) => items.map((x) => '    ' + JSON.stringify(x)).join(',\n');
  writeFileSync(
    OUT,
    `{\n  "generatedAt": ${JSON.stringify(catalog.generatedAt)},\n  "servers": [\n${lines(servers)}\n  ],\n  "tools": [\n${lines(tools)}\n  ]\n}\n`,
  );
  process.stderr.write(`${servers.length} servers, ${tools.length} tools -> catalog.json\n`);
}

await main();
