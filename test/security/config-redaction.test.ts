// Credentials in the config, written the ways an operator (or an attacker trying to get one
// past the redactor) would write them, then read back through every path that shows config:
// config.get through the real gateway tool, the card and audit rows of a real config.patch,
// the config.applied row and restart errors of a reload, `warden mcp list`, and the logs.
// Each secret below must not appear; each name or harmless value must still be shown.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import { main } from '../../src/cli.js';
import type { CliIO } from '../../src/cli/args.js';
import { loadConfig, parseConfig } from '../../src/config/index.js';
import { redactConfig } from '../../src/redact/redact.js';
import { ConfigAdmin } from '../../src/control/config-admin.js';
import { DeciderGuards } from '../../src/control/decider-guards.js';
import { LiveConfig } from '../../src/control/live-config.js';
import { ConfigReloader } from '../../src/control/reloader.js';
import { buildTurnContext } from '../../src/turn/turn-context.js';
import { LOG_SERIALIZERS } from '../../src/log/log.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { createGatewayTool } from '../../src/control/tools/gateway/gateway.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';

interface Row {
  what: string;
  /** A config (validated by the real schema). */
  config: Record<string, unknown>;
  /** Strings that must not be shown anywhere. */
  hidden: string[];
  /** Strings that must still be shown. */
  shown?: string[];
  env?: Record<string, string>;
}

const mcp = (server: Record<string, unknown>) => ({ mcp: { servers: { x: server } } });
const plugin = (config: Record<string, unknown>) => ({ plugins: { entries: { p: { config } } } });
const provider = (p: Record<string, unknown>) => ({ models: { providers: { acme: { api: 'openai', ...p } } } });

const ROWS: Row[] = [
  // URL userinfo, any scheme.
  { what: 'postgres userinfo', config: { store: { url: 'postgres://warden:Pw0rd-1@db:5432/warden' } }, hidden: ['Pw0rd-1'], shown: ['db:5432/warden'] },
  { what: 'postgresql userinfo with %40 in the password', config: { store: { url: 'postgresql://warden:p%40ssw0rd@db/warden' } }, hidden: ['p%40ssw0rd', 'p@ssw0rd'] },
  { what: 'an unencoded @ in the password', config: { store: { url: 'postgres://warden:p@ss@word@db/warden' } }, hidden: ['p@ss', 'ss@word'], shown: ['@db/warden'] },
  { what: 'a slash in the password (no valid port)', config: plugin({ dsn2: 'postgres://u:pa/ss99@db/x' }), hidden: ['pa/ss99', 'ss99'] },
  { what: 'a blank inside the password (no @ in the same word)', config: plugin({ u: 'postgres://u:blank part@db/x' }), hidden: ['blank'] },
  { what: 'a backslash before the @', config: plugin({ u: 'https://u:bslashpw\\@host/x' }), hidden: ['bslashpw'] },
  { what: 'an IPv6 host after userinfo', config: { store: { url: 'postgres://u:v6secret@[fd00::1]:5432/db' } }, hidden: ['v6secret'], shown: ['[fd00::1]:5432/db'] },
  { what: 'redis password without a user', config: plugin({ cache: 'redis://:r3dispass@cache:6379/0' }), hidden: ['r3dispass'], shown: ['cache:6379/0'] },
  { what: 'a token as the https username', config: provider({ baseUrl: 'https://ghtok12345@api.example.com/v1' }), hidden: ['ghtok12345'], shown: ['api.example.com/v1'] },
  { what: 'user:token in an MCP url', config: mcp({ url: 'https://bot:mcpT0ken99@mcp.example.com/mcp' }), hidden: ['mcpT0ken99', 'bot:mcpT0ken99'] },
  { what: 'an upper-case scheme', config: plugin({ u: 'HTTPS://USER:UPPERPASS@HOST/x' }), hidden: ['UPPERPASS'] },
  { what: 'a scheme-less DSN (Go MySQL)', config: plugin({ mysql: 'app:dsnpass1@tcp(db:3306)/app' }), hidden: ['dsnpass1'], shown: ['tcp(db:3306)/app'] },
  { what: 'libpq key=value conninfo', config: plugin({ conninfo: 'host=db user=w password=kvpass1 sslmode=require' }), hidden: ['kvpass1'], shown: ['sslmode=require'] },
  // Query-string tokens.
  { what: '?token=', config: provider({ baseUrl: 'https://api.example.com/v1?token=qtok1&region=eu' }), hidden: ['qtok1'], shown: ['region=eu'] },
  { what: '?access_token=, mixed case', config: provider({ baseUrl: 'https://api.example.com/v1?Access_Token=qtok2' }), hidden: ['qtok2'] },
  { what: '?api_key= and &key=', config: plugin({ u: 'https://x.example/a?api_key=qtok3&key=qtok4' }), hidden: ['qtok3', 'qtok4'] },
  { what: 'a percent-encoded parameter name', config: plugin({ u: 'https://x.example/a?%74oken=qtok5' }), hidden: ['qtok5'] },
  { what: 'a signed URL', config: plugin({ u: 'https://b.s3.example/o?X-Amz-Credential=AKIDX&X-Amz-Signature=qsig6&sig=qsig7' }), hidden: ['qsig6', 'qsig7', 'AKIDX'] },
  { what: 'password= and secret= in a query', config: plugin({ u: 'https://x.example/?PASSWORD=qpw8;secret=qsec9' }), hidden: ['qpw8', 'qsec9'] },
  { what: 'a token in the fragment', config: plugin({ u: 'https://x.example/cb#access_token=qfrag10' }), hidden: ['qfrag10'] },
  { what: 'a webhook secret in the URL path', config: plugin({ hook: 'https://discord.com/api/webhooks/123456789012345678/AbCdEf0123456789GhIjKlMn' }), hidden: ['AbCdEf0123456789GhIjKlMn'], shown: ['123456789012345678'] },
  // Argument lists.
  { what: '--api-key X', config: mcp({ command: 'srv', args: ['--api-key', 'argv-1'] }), hidden: ['argv-1'], shown: ['--api-key'] },
  { what: '--token=X', config: mcp({ command: 'srv', args: ['--token=argv-2'] }), hidden: ['argv-2'], shown: ['--token='] },
  { what: 'Go-style -token X and -password=X', config: mcp({ command: 'srv', args: ['-token', 'argv-3', '-password=argv-4'] }), hidden: ['argv-3', 'argv-4'] },
  { what: 'upper case --API-KEY', config: mcp({ command: 'srv', args: ['--API-KEY', 'argv-5'] }), hidden: ['argv-5'] },
  { what: 'a secret that starts with a dash', config: mcp({ command: 'srv', args: ['--password', '-argv-6'] }), hidden: ['-argv-6'] },
  { what: '--header "Authorization: Bearer …"', config: mcp({ command: 'srv', args: ['--header', 'Authorization: Bearer argv-7'] }), hidden: ['argv-7'], shown: ['Authorization:'] },
  { what: '-H with any header name', config: mcp({ command: 'srv', args: ['-H', 'X-Custom: argv-8'] }), hidden: ['argv-8'], shown: ['X-Custom:'] },
  { what: '--header=…', config: mcp({ command: 'srv', args: ['--header=Cookie: sid=argv-9'] }), hidden: ['argv-9'] },
  { what: 'mysql -pSECRET', config: mcp({ command: '/usr/bin/mysql', args: ['-h', 'db', '-pargv-10', 'app'] }), hidden: ['argv-10'], shown: ['db'] },
  { what: 'redis-cli -a SECRET', config: mcp({ command: 'redis-cli', args: ['-a', 'argv-11'] }), hidden: ['argv-11'] },
  { what: 'curl -u user:pass', config: { tools: { media: { models: [{ type: 'cli', command: 'curl', capabilities: ['image'], args: ['-u', 'me:argv-12', '{{AttachmentPath}}'] }] } } }, hidden: ['argv-12'] },
  { what: 'a command line in one element', config: mcp({ command: 'sh', args: ['-c', 'exec srv --token argv-13 --verbose'] }), hidden: ['argv-13'], shown: ['--verbose'] },
  { what: 'a shaped token as a bare argument', config: mcp({ command: 'srv', args: ['ghp_0123456789abcdefghij0123'] }), hidden: ['ghp_0123456789abcdefghij0123'] },
  { what: 'user:pass after -u for any program', config: mcp({ command: 'httpclient', args: ['-u', 'me:argv-15', '--user', 'you:argv-16'] }), hidden: ['argv-15', 'argv-16'] },
  { what: 'a glob or a variable after a secret flag is no secret (an approver must see the wildcard)', config: mcp({ command: 'srv', args: ['--token', '*', '--api-key=$API_KEY'] }), hidden: [], shown: ['"--token","*"', '--api-key=$API_KEY'] },
  { what: 'a $-leading password is not taken for a variable', config: mcp({ command: 'srv', args: ['--password', '$ecretPass9'] }), hidden: ['$ecretPass9'] },
  { what: 'a URL with userinfo as an argument', config: mcp({ command: 'srv', args: ['--db', 'postgres://u:argv-14@db/x'] }), hidden: ['argv-14'] },
  // Env and headers maps: names shown, values hidden, whatever the names.
  { what: 'an MCP env map', config: mcp({ command: 'srv', env: { GITHUB_TOKEN: 'envval-1', HARMLESS: 'envval-2' } }), hidden: ['envval-1', 'envval-2'], shown: ['GITHUB_TOKEN', 'HARMLESS'] },
  { what: 'a skill env map', config: { skills: { entries: { gh: { env: { GH_PAT: 'envval-3' } } } } }, hidden: ['envval-3'], shown: ['GH_PAT'] },
  { what: 'MCP headers of any name', config: mcp({ url: 'https://mcp.example.com/', headers: { Authorization: 'Bearer hdr-1', 'X-Goog-Api-Key': 'hdr-2', 'X-Tenant': 'hdr-3' } }), hidden: ['hdr-1', 'hdr-2', 'hdr-3'], shown: ['X-Tenant'] },
  { what: 'web fetch headers', config: { tools: { web: { fetch: { headers: { Cookie: 'sid=hdr-4' } } } } }, hidden: ['hdr-4'] },
  // Secret-named keys, and what is not a secret.
  { what: 'platform tokens', config: { channels: { discord: { token: 'key-disc-1' }, slack: { botToken: 'xoxb-key-2', appToken: 'xapp-key-3', signingSecret: 'key-4xyz' } } }, hidden: ['key-disc-1', 'xoxb-key-2', 'xapp-key-3', 'key-4xyz'] },
  { what: 'HTTP API tokens by label', config: { gateway: { http: { enabled: true, tokens: { ci: 'key-http-5-0123456789' } } } }, hidden: ['key-http-5-0123456789'], shown: ['ci'] },
  { what: 'a skill apiKey', config: { skills: { entries: { gh: { apiKey: 'key-skill-6' } } } }, hidden: ['key-skill-6'] },
  { what: 'plugin config keys in every case and spelling', config: plugin({ API_KEY: 'key-7a', 'private-key': 'key-7b', clientSecret: 'key-7c', Passwd: 'key-7d', auth: { user: 'u', pass: 'key-7e' }, credentials: ['key-7f'] }), hidden: ['key-7a', 'key-7b', 'key-7c', 'key-7d', 'key-7e', 'key-7f'] },
  { what: 'JSON inside a string', config: plugin({ blob: '{"apiKey": "key-8a", "nested": {"password":"key-8b"}}' }), hidden: ['key-8a', 'key-8b'] },
  { what: 'a PEM private key anywhere', config: plugin({ pem: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----' }), hidden: ['MIIEvQIBADANBgkqhkiG9w0BAQEFAASC'] },
  // A value hidden in one place is hidden wherever else it appears.
  { what: 'an env value reused in a URL', config: { ...mcp({ command: 'srv', env: { T: 'reused-secret-1' } }), ...plugin({ u: 'https://x.example/p/reused-secret-1/q' }) }, hidden: ['reused-secret-1'] },
  { what: 'a userinfo password reused in a note', config: { store: { url: 'postgres://w:reused-pw-2@db/w' }, ...plugin({ note: 'the db password is reused-pw-2' }) }, hidden: ['reused-pw-2'] },
  { what: 'the URL-encoded form of a hidden value', config: { ...mcp({ command: 'srv', env: { T: 'a b/c@d!' } }), ...plugin({ u: 'https://x.example/?q=a%20b%2Fc%40d!' }) }, hidden: ['a b/c@d!', 'a%20b%2Fc%40d!'] },
  { what: 'the value of the variable an *Env key names', config: { ...provider({ apiKeyEnv: 'ACME_KEY' }), ...plugin({ copied: 'env-named-secret-9' }) }, env: { ACME_KEY: 'env-named-secret-9' }, hidden: ['env-named-secret-9'], shown: ['ACME_KEY'] },
  { what: 'a secret-named variable pulled in by ${NAME} under a plain key', config: { agents: { list: [{ id: 'main', name: 'bot PULLED-aws-secret-1' }] } }, env: { AWS_SECRET_ACCESS_KEY: 'PULLED-aws-secret-1', HOME: '/root' }, hidden: ['PULLED-aws-secret-1'] },
  // Names and counts stay.
  { what: 'apiKeyEnv is a name', config: { tools: { web: { search: { provider: 'brave', apiKeyEnv: 'BRAVE_API_KEY' } } } }, hidden: [], shown: ['BRAVE_API_KEY'] },
  { what: 'an *Env key that holds no variable name is a value', config: plugin({ tokenEnv: 'not a name: s3cr3t-v' }), hidden: ['s3cr3t-v'] },
  { what: 'token counts are numbers, not credentials', config: { models: { maxOutputTokens: 4096 } }, hidden: [], shown: ['4096'] },
];

function shown(config: Record<string, unknown>, env: Record<string, string> = {}): string {
  const parsed = parseConfig(config);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return JSON.stringify(redactConfig(parsed.value.config, { env }));
}

describe('config redaction: the spellings', () => {
  it.each(ROWS.map((r) => [r.what, r] as const))('%s', (_what, row) => {
    const text = shown(row.config, row.env);
    for (const s of row.hidden) expect(text).not.toContain(JSON.stringify(s).slice(1, -1));
    for (const s of row.shown ?? []) expect(text).toContain(s);
  });

  it('a JSON5 file: escaped key names, single quotes, hex and unicode escapes are read as the loader reads them', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-redact-json5-'));
    const file = path.join(dir, 'warden.config.json5');
    writeFileSync(
      file,
      `{ plugins: { entries: { p: { config: { 'pass\\u0077ord': 'j5-secret-1', "\\x74oken": "j5-secret-2", url: 'postgres://u:j5\\x2dsecret\\x2d3@db/x', args: ['--api\\u002dkey', 'j5-secret-4'] } } } } }`,
    );
    const loaded = loadConfig({ file, env: {} });
    if (!loaded.ok) throw loaded.error;
    const text = JSON.stringify(redactConfig(loaded.value.config));
    for (const secret of ['j5-secret-1', 'j5-secret-2', 'j5-secret-3', 'j5-secret-4']) expect(text).not.toContain(secret);
  });

  it('keeps the shape: every key, every list length, booleans and null', () => {
    const parsed = parseConfig({ ...mcp({ command: 'srv', args: ['--token', 't0ken-x', '-v'], env: { A: 'b-val' }, enabled: true }) });
    if (!parsed.ok) throw parsed.error;
    const server = (redactConfig(parsed.value.config).mcp!.servers as Record<string, { args: string[]; env: Record<string, string>; enabled: boolean }>).x!;
    expect(server).toMatchObject({ args: ['--token', '[redacted]', '-v'], env: { A: '[redacted]' }, enabled: true });
  });
});

// ---------------------------------------------------------------------------------------------
// Every path that shows config.

const SECRET_CONFIG = [
  'owners: { discord: ["1", "2"] }',
  'approvals: { approvers: { discord: ["1", "2"] } }',
  'store: { url: "postgres://warden:StorePw-77@db:5432/warden" }',
  'models:',
  '  providers:',
  '    acme: { api: openai, baseUrl: "https://u:BasePw-77@llm.example.com/v1?api_key=QueryKey-77", apiKeyEnv: ACME_KEY }',
  'mcp:',
  '  servers:',
  '    gh: { command: gh-mcp, args: ["--api-key", "ArgKey-77", "--token=ArgTok-77"], env: { GITHUB_TOKEN: EnvTok-77 } }',
  // A secret-named variable pulled into a plain key by substitution.
  'agents: { list: [{ id: main, name: "ops ${PGPASSWORD}" }] }',
  '',
].join('\n');
const SECRETS = ['StorePw-77', 'BasePw-77', 'QueryKey-77', 'ArgKey-77', 'ArgTok-77', 'EnvTok-77', 'AcmeEnvValue-77', 'PgEnvPw-77'];
const ENV = { ACME_KEY: 'AcmeEnvValue-77', PGPASSWORD: 'PgEnvPw-77' };
const noSecret = (text: string) => {
  for (const s of SECRETS) expect(text).not.toContain(s);
};

async function running(text = SECRET_CONFIG, restartErrors: string[] = []) {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-redact-'));
  const file = path.join(dir, 'warden.config.yaml');
  writeFileSync(file, text);
  const loaded = loadConfig({ file, env: ENV });
  if (!loaded.ok) throw loaded.error;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const live = new LiveConfig(loaded.value, readFileSync(file, 'utf8'));
  const approvals = new ApprovalService({ store: opened.store, config: { get owners() { return live.current().loaded.config.owners; }, get approvals() { return live.current().loaded.config.approvals; } } });
  const guards = new DeciderGuards();
  const dms: string[] = [];
  const reloader = new ConfigReloader(live, { check: () => [], swap: () => {}, restart: async () => restartErrors, notifyOwners: async (t) => void dms.push(t), audit: approvals.audit, env: ENV });
  const admin = new ConfigAdmin({ live, reloader, approvals, guards, audit: approvals.audit, env: ENV, providers: () => ['discord'] });
  const tool = createGatewayTool({ config: loaded.value.config, admin });
  const turn = (sender: string) => buildTurnContext(live.current().loaded.config, { agentId: 'main', conversation: { provider: 'discord', chat: 'dm', channelId: `dm-${sender}` }, sender: { id: sender } });
  const call = (args: Parameters<typeof tool.execute>[0], sender = '1') => tool.execute(args, { turn: turn(sender), sessionKey: `agent:main:discord:direct:${sender}` } as ToolCallContext) as Promise<ToolResult>;
  const close = async () => {
    approvals.shutdown();
    await opened.store.close();
  };
  return { dir, file, approvals, guards, reloader, call, dms, close };
}

const everything = (r: ToolResult) => JSON.stringify(r);

describe('config redaction: every path that shows config', () => {
  it('config.get through the gateway tool, whole and by path; apiKeyEnv shows the name', async () => {
    const s = await running();
    const whole = await s.call({ action: 'config.get' });
    noSecret(everything(whole));
    expect(everything(whole)).toContain('ACME_KEY');
    expect(everything(whole)).toContain('llm.example.com/v1');
    for (const p of ['store', 'store.url', 'models.providers.acme', 'mcp.servers.gh.args', 'mcp.servers.gh.env']) noSecret(everything(await s.call({ action: 'config.get', path: p })));
    await s.close();
  });

  it('a config.patch: its card, its answer, its audit row and the config.applied row show old → new redacted', async () => {
    const s = await running();
    const outcome = s.call({ action: 'config.patch', patch: { mcp: { servers: { gh: { args: ['--api-key', 'NewArgKey-88', '--token', 'NewTok-88'] } } } } });
    await expect.poll(async () => (await s.approvals.list()).length).toBeGreaterThan(0);
    const card = (await s.approvals.list())[0]!;
    expect(JSON.stringify(card)).toContain('mcp.servers.gh.args');
    expect(await s.approvals.resolve(card.id, 'allow-once', { provider: 'discord', userId: '2', via: { kind: 'typed' } })).toMatchObject({ kind: 'resolved' });
    const r = await outcome;
    expect(r.isError).toBeFalsy();
    const rows = await s.approvals.audit.list({ typePrefix: 'config.' });
    const text = JSON.stringify([card, r, rows]);
    noSecret(text);
    expect(text).not.toContain('NewArgKey-88');
    expect(text).not.toContain('NewTok-88');
    expect(rows.map((e) => e.type).sort()).toEqual(['config.applied', 'config.patched']);
    // Still a useful diff: which key changed, and the flags around the hidden values.
    expect(JSON.stringify(rows.find((e) => e.type === 'config.patched')!.data)).toContain('"after":["--api-key","[redacted]","--token","[redacted]"]');
    await s.close();
  });

  it('a refused patch whose problem quotes a value pulled from the environment (the answer and the audit row)', async () => {
    const s = await running();
    const r = await s.call({ action: 'config.patch', patch: { bindings: [{ agentId: '${PGPASSWORD}', match: { channel: 'discord' } }] } });
    expect(r.isError).toBe(true);
    expect(everything(r)).toContain('unknown agent');
    const rows = await s.approvals.audit.list({ typePrefix: 'config.' });
    expect(rows.map((e) => e.type)).toEqual(['config.patch.invalid']);
    noSecret(JSON.stringify([r, rows]));
    await s.close();
  });

  it('the card of a widening patch (and the refused audit row) hide the values it changes', async () => {
    const s = await running();
    const outcome = s.call({ action: 'config.patch', patch: { models: { providers: { acme: { baseUrl: 'https://u:CardPw-99@evil.example.com/v1' } } } } });
    await expect.poll(async () => (await s.approvals.list()).length).toBeGreaterThan(0);
    const card = (await s.approvals.list())[0]!;
    noSecret(JSON.stringify(card));
    expect(JSON.stringify(card)).not.toContain('CardPw-99');
    expect(JSON.stringify(card)).toContain('evil.example.com');
    await s.approvals.resolve(card.id, 'deny', { provider: 'discord', userId: '2', via: { kind: 'typed' } });
    const r = await outcome;
    const rows = await s.approvals.audit.list({ typePrefix: 'config.' });
    expect(JSON.stringify([r, rows])).not.toContain('CardPw-99');
    await s.close();
  });

  it('a reload from the file: the config.applied row and restart errors quoting a URL', async () => {
    const s = await running(SECRET_CONFIG, ['store could not reconnect to postgres://warden:StorePw-77@db:5432/warden']);
    writeFileSync(s.file, SECRET_CONFIG.replace('EnvTok-77', 'EnvTok-78'));
    const r = await s.reloader.reloadFile('reload');
    const rows = await s.approvals.audit.list({ typePrefix: 'config.' });
    const text = JSON.stringify([r, rows]);
    noSecret(text);
    expect(text).not.toContain('EnvTok-78');
    expect(text).toContain('mcp.servers.gh.env.GITHUB_TOKEN');
    await s.close();
  });

  it('a refused file edit: the owners\' DM and the audit row', async () => {
    const s = await running();
    writeFileSync(s.file, `${SECRET_CONFIG}gateway: { http: { enabled: true, token: "short-Tok" } }\n`);
    await s.reloader.reloadFile('file');
    const rows = await s.approvals.audit.list({ typePrefix: 'config.' });
    expect(s.dms.length).toBe(1);
    const text = JSON.stringify([s.dms, rows]);
    noSecret(text);
    expect(text).not.toContain('short-Tok');
    await s.close();
  });

  it('`warden mcp list`: the launch line and the last error (a child echoing its arguments)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-redact-cli-'));
    writeFileSync(
      path.join(dir, 'warden.config.yaml'),
      [
        'mcp:',
        '  servers:',
        '    echoes:',
        '      command: sh',
        `      args: ["-c", 'echo "starting with $*" >&2; exit 3', "sh", "--token", "CliTok-55", "--db=postgres://u:CliPw-55@db/x"]`,
        '      env: { API_TOKEN: CliEnv-55 }',
        '      connectTimeoutSec: 5',
        '    web:',
        '      url: "http://u:CliUrlPw-55@127.0.0.1:9/mcp?token=CliQuery-55"',
        '      connectTimeoutSec: 5',
        '',
      ].join('\n'),
    );
    let out = '';
    const io: CliIO = { stdout: (t) => void (out += `${t}\n`), stderr: (t) => void (out += `${t}\n`), cwd: dir, env: {} };
    for (const argv of [['mcp', 'list'], ['mcp', 'list', '--json'], ['mcp', 'tools', 'echoes']]) await main(argv, io);
    for (const s of ['CliTok-55', 'CliPw-55', 'CliEnv-55', 'CliUrlPw-55', 'CliQuery-55']) expect(out).not.toContain(s);
    expect(out).toContain('--token [redacted]');
    expect(out).toContain('starting with');
  }, 30_000);

  it('`warden audit`: a finding that quotes a config value', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-redact-audit-'));
    writeFileSync(path.join(dir, 'warden.config.yaml'), 'tools:\n  exec:\n    allowlist: [{ pattern: "deploy --api-key=AuditKey-66 --url=https://u:AuditPw-66@h/x" }]\n');
    let out = '';
    const io: CliIO = { stdout: (t) => void (out += `${t}\n`), stderr: (t) => void (out += `${t}\n`), cwd: dir, env: {} };
    await main(['audit', '--json'], io);
    await main(['audit'], io);
    expect(out).toContain('is a relative path');
    expect(out).not.toContain('AuditKey-66');
    expect(out).not.toContain('AuditPw-66');
  }, 60_000);

  it('logs: a config or a config change logged through pino is redacted', () => {
    let logged = '';
    const sink = new Writable({ write: (chunk, _enc, done) => void ((logged += String(chunk)), done()) });
    const logger = pino({ base: undefined, serializers: LOG_SERIALIZERS }, sink);
    const parsed = loadConfig({ file: (() => {
      const dir = mkdtempSync(path.join(tmpdir(), 'warden-redact-log-'));
      writeFileSync(path.join(dir, 'warden.config.yaml'), SECRET_CONFIG);
      return path.join(dir, 'warden.config.yaml');
    })(), env: ENV });
    if (!parsed.ok) throw parsed.error;
    // The serializers know the process's environment, as the running Warden's logger does.
    vi.stubEnv('PGPASSWORD', ENV.PGPASSWORD);
    logger.info({ config: parsed.value.config }, 'config');
    vi.unstubAllEnvs();
    logger.info({ changes: [{ path: 'store.url', after: 'postgres://w:StorePw-77@db/w' }] }, 'changes');
    noSecret(logged);
    expect(logged).toContain('ACME_KEY');
  });
});
