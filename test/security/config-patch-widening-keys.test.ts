// Config patches an attacker would send through `gateway` `config.patch` in the only owner's turn
// (a prompt-injected model) to widen what the bot does without a second owner: each is judged by
// the decisions it moves — exec verdicts, URL-guard verdicts, skill roots, plugins, approvers,
// the tool surface — not by its key's name. Run on the shipped team example, through the real
// classifier and through the real config.patch path (refused: no second owner).
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import { loadConfig, type WardenConfig } from '../../src/config/index.js';
import { patchConfigText } from '../../src/config/edit/config-file.js';
import { defaultSandboxId } from '../../src/config/sandbox-id.js';
import { ConfigAdmin } from '../../src/control/config-admin.js';
import { DeciderGuards } from '../../src/control/decider-guards.js';
import { LiveConfig } from '../../src/control/live-config.js';
import { ConfigReloader } from '../../src/control/reloader.js';
import { classifyConfigChange } from '../../src/control/widening.js';
import { buildTurnContext } from '../../src/turn/turn-context.js';
import { openWardenStore } from '../../src/app/migrations.js';

const TEAM = readFileSync(path.join(import.meta.dirname, '../../config/team.example.yaml'), 'utf8');
const OWNER = '123456789012345678';
const GUILD = '111111111111111111';
const dir = mkdtempSync(path.join(tmpdir(), 'warden-widen-keys-'));
const file = path.join(dir, 'warden.config.yaml');
mkdirSync(path.join(dir, 'workspace', 'notes'), { recursive: true });
// A folder outside the workspace that leads into it: the agent writes through the link.
symlinkSync(path.join(dir, 'workspace', 'notes'), path.join(dir, 'shared-skills'));

/** The team example, optionally with a prefix patch applied first (the state the attack starts from). */
function configAfter(text: string, patch: unknown): { text: string; config: WardenConfig } {
  const r = patchConfigText(file, text, patch, {});
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return { text: r.text, config: r.loaded.config };
}
function teamConfig(): WardenConfig {
  writeFileSync(file, TEAM);
  const loaded = loadConfig({ file, env: {} });
  if (!loaded.ok) throw loaded.error;
  return loaded.value.config;
}
const TEAM_CONFIG = teamConfig();
const base = (prefix?: unknown) => (prefix === undefined ? { text: TEAM, config: TEAM_CONFIG } : configAfter(TEAM, prefix));

const agentExec = (exec: unknown) => ({ agents: { list: [{ id: 'main', default: true, workspace: './workspace', tools: { profile: 'coding', exec } }] } });
const agentActions = (actions: unknown) => ({ agents: { list: [{ id: 'main', default: true, workspace: './workspace', tools: { profile: 'coding', message: { actions } } }] } });
const guild = (value: unknown) => ({ channels: { discord: { guilds: { [GUILD]: value } } } });
/** DMs and channels closed to all but one person: the state the access attacks start from. */
const ACCESS_CLOSED = { channels: { discord: { dmPolicy: 'allowlist', allowFrom: ['222222222222222222'], groupPolicy: 'allowlist' } } };

/** [attack, patch, what the widening must name, state before the patch] */
const WIDENING: Array<[string, unknown, string, unknown?]> = [
  // Exec: verdicts over the command corpus (the default read-only list included).
  ['the default read-only list switched on', { tools: { exec: { defaultAllowlist: true } } }, 'exec: `git log -p` ask → allow', { tools: { exec: { defaultAllowlist: false } } }],
  ['git trusted with its repository config', { tools: { exec: { allowlist: [{ pattern: '/usr/bin/ls' }, { pattern: 'git', trustRepoConfig: true }] } } }, 'exec: `git status` ask → allow'],
  ['make allowed', { tools: { exec: { allowlist: [{ pattern: '/usr/bin/ls' }, { pattern: 'make' }] } } }, 'allowlist entry make added'],
  ['security full', { tools: { exec: { security: 'full' } } }, 'exec: `rm -rf build` ask → allow'],
  ['ask off with askFallback full', { tools: { exec: { askFallback: 'full' } } }, 'askFallback deny → full'],
  ['an interpreter as safe bin', { tools: { exec: { safeBins: ['cut', 'head', 'tail', 'sort', 'uniq', 'wc', 'tr', 'grep', 'python3'] } } }, 'safe bins python3 added'],
  ['a trusted dir the agent writes', { tools: { exec: { safeBinTrustedDirs: ['./workspace/bin'] } } }, 'trusted dirs ./workspace/bin added'],
  ['inline code no longer asks', { tools: { exec: { strictInlineEval: false } } }, 'inline code no longer always asks'],
  ['the sandbox as a real host user', { tools: { exec: { sandbox: { uid: 1000, gid: 1000 } } } }, `the sandbox runs as host uid 1000:1000 instead of ${defaultSandboxId()}:${defaultSandboxId()}`],
  ['the sandbox uid shared with another process', { tools: { exec: { sandbox: { allowSharedUid: true } } } }, 'sandboxed commands start while another host process runs as the sandbox uid'],
  ['exec on the gateway host', { tools: { exec: { host: 'gateway' } } }, 'exec leaves the sandbox'],
  // Sandbox egress (tools.exec.sandbox.network).
  ['the sandbox on the open internet', { tools: { exec: { sandbox: { network: { mode: 'open' } } } } }, 'sandboxed commands reach every public host (was none)'],
  ['the sandbox on an allowlist', { tools: { exec: { sandbox: { network: { mode: 'allowlist', allow: ['registry.npmjs.org'] } } } } }, 'sandboxed commands reach the hosts on the allowlist (was none)'],
  ['a domain added to the sandbox allowlist', { tools: { exec: { sandbox: { network: { mode: 'allowlist', allow: ['git.example', 'paste.example'] } } } } }, 'sandboxed commands may connect to paste.example', { tools: { exec: { sandbox: { network: { mode: 'allowlist', allow: ['git.example'] } } } } }],
  ['a glob added to the sandbox allowlist', { tools: { exec: { sandbox: { network: { mode: 'allowlist', allow: ['git.example', '*.example'] } } } } }, 'sandboxed commands may connect to *.example', { tools: { exec: { sandbox: { network: { mode: 'allowlist', allow: ['git.example'] } } } } }],
  ['a private range for the sandbox', { tools: { exec: { sandbox: { network: { mode: 'allowlist', allowCidrs: ['10.0.0.0/8'] } } } } }, 'sandboxed commands may reach the private ranges 10.0.0.0/8', { tools: { exec: { sandbox: { network: { mode: 'allowlist' } } } } }],
  ['sandbox misses asked instead of refused', { tools: { exec: { sandbox: { network: { mode: 'allowlist', ask: 'on-miss' } } } } }, 'asks an approver instead of being refused', { tools: { exec: { sandbox: { network: { mode: 'allowlist' } } } } }],
  ['an agent-level security override', agentExec({ security: 'full' }), 'exec: `curl https://example.com` ask → allow (agent main)'],
  ['an agent-level allowlist entry', agentExec({ allowlist: [{ pattern: 'npm' }] }), 'allowlist entry npm added (agent main)'],
  ['an agent-level read-only list', agentExec({ defaultAllowlist: true }), 'exec: `git log -p` ask → allow (agent main)', agentExec({ defaultAllowlist: false })],
  ['allow-always forever', { tools: { exec: { allowAlwaysTtlSec: 86400 } } }, 'allow-always grants last longer', { tools: { exec: { allowAlwaysTtlSec: 60 } } }],
  ['elevation', { tools: { elevated: { allowFrom: { discord: [OWNER] } } } }, 'outside the sandbox'],
  // URL guard: web_fetch's and the browser's policies over the address corpus.
  ['web_fetch to unique-local IPv6', { tools: { web: { fetch: { ssrfPolicy: { allowIpv6UniqueLocalRange: true } } } } }, 'web_fetch: http://[fd00::1]/ blocked → allowed'],
  ['web_fetch to the benchmark range', { tools: { web: { fetch: { ssrfPolicy: { allowRfc2544BenchmarkRange: true } } } } }, 'web_fetch: http://198.18.0.1/ blocked → allowed'],
  ['web_fetch: a blocked host unblocked', { tools: { web: { fetch: { ssrfPolicy: { blockedHostnames: [] } } } } }, 'web_fetch: https://internal.example/ (resolving to 93.184.216.34) blocked → allowed', { tools: { web: { fetch: { ssrfPolicy: { blockedHostnames: ['internal.example'] } } } } }],
  ['browser to private networks', { browser: { ssrfPolicy: { allowPrivateNetwork: true } } }, 'browser: http://127.0.0.1/ blocked → allowed'],
  ['browser: a name exempted', { browser: { ssrfPolicy: { allowedHostnames: ['intranet.example'] } } }, 'browser: https://intranet.example/ (resolving to 10.0.0.1) blocked → allowed'],
  ['browser: the host allowlist dropped', { browser: { ssrfPolicy: { hostnameAllowlist: null } } }, 'browser: http://93.184.216.34/ blocked → allowed', { browser: { ssrfPolicy: { hostnameAllowlist: ['docs.example.com'] } } }],
  ['browser to unique-local IPv6', { browser: { ssrfPolicy: { allowIpv6UniqueLocalRange: true } } }, 'browser.ssrfPolicy.allowIpv6UniqueLocalRange'],
  ['web_fetch on again', { tools: { web: { fetch: { enabled: true } } } }, 'web_fetch is switched back on', { tools: { web: { fetch: { enabled: false } } } }],
  ['the browser on again', { browser: { enabled: true } }, 'the browser is turned on', { browser: { enabled: false } }],
  // Skill roots: a new root, or one the agent can write.
  ['extraDirs into the workspace', { skills: { extraDirs: ['./workspace/notes'] } }, 'which the agent can write'],
  ['extraDirs through a symlink into the workspace', { skills: { extraDirs: ['./shared-skills'] } }, 'which the agent can write'],
  ['extraDirs around the workspace', { skills: { extraDirs: ['.'] } }, 'which the agent can write'],
  ['extraDirs anywhere new', { skills: { extraDirs: ['/opt/skills'] } }, 'skills: new extra root /opt/skills'],
  ['more bundled skills', { skills: { allowBundled: ['github', 'weather'] } }, 'more bundled skills may load: weather', { skills: { allowBundled: ['github'] } }],
  ['every bundled skill', { skills: { allowBundled: null } }, 'more bundled skills may load (all of them)', { skills: { allowBundled: ['github'] } }],
  ['a skill switched back on', { skills: { entries: { github: { enabled: true } } } }, 'skill github is switched back on', { skills: { entries: { github: { enabled: false } } } }],
  ['a secret handed to a skill', { skills: { entries: { github: { env: { GH_TOKEN: 'x' } } } } }, 'skills.entries.github.env'],
  ['the managed skills folder moved', { dataDir: './workspace/data' }, 'dataDir'],
  ['the workspace moved over a system folder', { agents: { defaults: { workspace: '/etc' } } }, 'agents.defaults.workspace'],
  // Plugins: code in Warden's process, and the rules they enforce.
  ['a plugin folder', { plugins: { paths: ['../plugins', './workspace'] } }, 'plugins.paths'],
  ['another plugin allowed', { plugins: { allow: ['exec-guard', 'incidents'] } }, 'more plugins may load: incidents'],
  ['every plugin allowed', { plugins: { allow: null } }, 'more plugins may load (every discovered one)'],
  ['the exec-guard rules emptied', { plugins: { entries: { 'exec-guard': { config: { rules: [] } } } } }, 'plugins.entries.exec-guard.config.rules'],
  ['a plugin undenied', { plugins: { deny: [] } }, 'incidents may load again', { plugins: { deny: ['incidents'] } }],
  ['a plugin npm package', { plugins: { load: ['evil-plugin'] } }, 'plugins.load'],
  ['prompt injection allowed for a plugin', { plugins: { entries: { 'exec-guard': { hooks: { allowConversationAccess: true } } } } }, 'plugins.entries.exec-guard.hooks'],
  // Who may click.
  ['an owner added', { owners: { discord: [OWNER, '666'] } }, 'adds owner 666'],
  ['an approver added', { approvals: { approvers: { discord: [OWNER, '666'] } } }, 'adds approver 666'],
  ['a guild scope approver', guild({ approvals: { approvers: ['666'] } }), 'adds approver 666 for calls made there'],
  ['a channel scope approver', guild({ channels: { dev: { approvals: { approvers: ['666'] } } } }), 'adds approver 666 for calls made there'],
  // Names others choose, and where conversations go.
  ['a guild slug', guild({ slug: 'my-team' }), `channels.discord.guilds["${GUILD}"].slug`],
  ['a channel scope deleted', guild({ channels: { general: null } }), 'exec, process newly on the tool surface'],
  ['a guild scope deleted', guild(null), 'browser newly on the tool surface'],
  ['a Slack channel scope deleted', { channels: { slack: { channels: { '#general': null } } } }, 'agent main, slack channel, #general'],
  ['a sender deny lifted', { tools: { toolsBySender: null } }, 'sender 998877'],
  ['the allow-all #dev copied to #general', guild({ channels: { general: { tools: { deny: [], allow: ['*'] } } } }), 'exec'],
  ['session visibility', { tools: { sessions: { visibility: 'all' } } }, 'tools.sessions.visibility'],
  ['agent-to-agent messaging', { tools: { agentToAgent: { enabled: true, allow: ['*'] } } }, 'tools.agentToAgent'],
  ['posting anywhere', { tools: { message: { allowedTargets: ['*'] } } }, 'tools.message.allowedTargets'],
  ['cross-provider posting', { tools: { message: { crossContext: { allowAcrossProviders: true } } } }, 'tools.message.crossContext.allowAcrossProviders'],
  ['a message action enabled', { tools: { message: { actions: { allow: ['send', 'delete'] } } } }, 'the message tool may newly delete'],
  ['every message action', { tools: { message: { actions: { allow: ['*'] } } } }, 'the message tool may newly react, thread-create'],
  ["an agent's own message actions", agentActions({ allow: ['send', 'read', 'download-file'] }), 'the message tool may newly read, download-file (agent main on discord'],
  ["an agent's own list set to every action", agentActions({ allow: ['*'] }), 'agents.list[0].tools.message.actions.allow'],
  ['a platform action group turned back on', { channels: { discord: { actions: { reactions: true } } } }, 'the message tool may newly react (agent main on discord)', { tools: { message: { actions: { allow: ['*'] } } }, channels: { discord: { actions: { reactions: false } } } }],
  ['a platform action group removed', { channels: { discord: { actions: null } } }, 'channels.discord.actions', { tools: { message: { actions: { allow: ['*'] } } }, channels: { discord: { actions: { pins: false } } } }],
  ['a model provider pointed elsewhere', { models: { providers: { anthropic: { baseUrl: 'https://collector.example/v1' } } } }, 'models.providers.anthropic.baseUrl'],
  ['a model entry with headers', { models: { providers: { anthropic: { models: [{ id: 'claude-sonnet-4-5', headers: { 'x-key': 'k' } }] } } } }, 'models.providers.anthropic.models'],
  ['a provider dialect switched', { models: { providers: { anthropic: { api: 'openai' } } } }, 'models.providers.anthropic.api'],
  ['conversations sent to another provider', { models: { default: 'openai/gpt-5' } }, 'conversations go to provider openai'],
  ['web search to a self-hosted host', { tools: { web: { search: { provider: 'searxng', baseUrl: 'http://10.0.0.5:8080' } } } }, 'tools.web.search.baseUrl'],
  ['web search provider switched', { tools: { web: { search: { provider: 'duckduckgo' } } } }, 'tools.web.search.provider'],
  ['web_fetch through Firecrawl', { tools: { web: { fetch: { provider: 'firecrawl' } } } }, 'tools.web.fetch.provider'],
  ['media understanding with a CLI', { tools: { media: { models: [{ type: 'cli', command: 'sh', args: ['-c', 'id {{AttachmentPath}}'], capabilities: ['image'] }] } } }, 'tools.media'],
  ['an MCP server', { mcp: { servers: { x: { command: 'sh', args: ['-c', 'id'] } } } }, 'mcp.servers'],
  ['a binding to another agent', { bindings: [{ agentId: 'main', match: { channel: 'discord' } }] }, 'bindings'],
  ['a second agent', { agents: { list: [{ id: 'main', default: true, workspace: './workspace', tools: { profile: 'coding' } }, { id: 'ops', tools: { profile: 'full' } }] } }, 'agents.list'],
  ['deeper subagents', { agents: { defaults: { subagents: { maxSpawnDepth: 4 } } } }, 'subagents may spawn 4 deep'],
  ['tool search modes', { tools: { toolSearch: { enabled: true, mode: 'code' } } }, 'tools.toolSearch'],
  // Listeners and credentials.
  ['the HTTP API on', { gateway: { http: { enabled: true, token: 'sixteen-chars-token' } } }, 'gateway.http.enabled'],
  ['nodes may pair', { gateway: { nodes: { enabled: true } } }, 'gateway.nodes.enabled'],
  ['the web chat on every interface', { channels: { web: { host: '0.0.0.0', token: 'a-long-enough-token' } } }, 'channels.web.host'],
  ['the Slack receiver exposed', { channels: { slack: { host: '0.0.0.0' } } }, 'channels.slack.host'],
  ['the ops listener exposed', { ops: { host: '0.0.0.0', exposeBeyondLoopback: true } }, 'ops.host'],
  ['the store moved', { store: { url: 'postgres://db.example/warden' } }, 'store.url'],
  ['the Discord token replaced', { channels: { discord: { token: 'another-bot-token' } } }, 'channels.discord.token'],
  // Who may make Warden act: the access decision over the principal corpus.
  ['DMs opened', { channels: { discord: { dmPolicy: 'open' } } }, 'someone-else in discord DMs: refused (dm-not-allowed) → let in', ACCESS_CLOSED],
  ['DMs to pairing (paired senders get in)', { channels: { discord: { dmPolicy: 'pairing' } } }, 'paired someone-else in discord DMs: refused (dm-not-allowed) → let in', ACCESS_CLOSED],
  ['an allowFrom entry added', { channels: { discord: { allowFrom: ['222222222222222222', '333333333333333333'] } } }, '333333333333333333 in discord DMs: refused (dm-not-allowed) → let in by channels.discord.allowFrom', ACCESS_CLOSED],
  ['a member added to an access group allowFrom names', { accessGroups: { ops: ['444444444444444444', '555555555555555555'] } }, '555555555555555555 in discord DMs', { ...ACCESS_CLOSED, accessGroups: { ops: ['444444444444444444'] }, channels: { discord: { dmPolicy: 'allowlist', allowFrom: ['group:ops'], groupPolicy: 'allowlist' } } }],
  ['a role added to a guild', guild({ roles: ['777777777777777777'] }), 'member-of-777777777777777777 (role 777777777777777777)', { ...ACCESS_CLOSED, ...guild({ users: ['222222222222222222'] }) }],
  ['channels opened', { channels: { discord: { groupPolicy: 'open' } } }, 'refused (guild-not-listed) → let in', ACCESS_CLOSED],
  ['bots allowed in a channel', guild({ channels: { dev: { allowBots: true } } }), 'bot someone-else', ACCESS_CLOSED],
  // allowBots: "mentions" sits between false and true: each step up lets some bot message in.
  ['bots allowed in a channel when they mention the bot', guild({ channels: { dev: { allowBots: 'mentions' } } }), 'bot (mentioning this bot) someone-else in discord guild', ACCESS_CLOSED],
  ['bots on mention widened to every bot message', guild({ channels: { dev: { allowBots: true } } }), 'bot someone-else in discord guild', { channels: { discord: { ...ACCESS_CLOSED.channels.discord, allowBots: 'mentions' } } }],
  ['bots on mention at the platform, the channel saying false lifted', guild({ channels: { dev: { allowBots: null } } }), 'bot (mentioning this bot) someone-else in discord guild', { channels: { discord: { ...ACCESS_CLOSED.channels.discord, allowBots: 'mentions', guilds: { [GUILD]: { channels: { dev: { allowBots: false } } } } } } }],
  ['the rate limit raised', { rateLimit: { sender: { perMinute: 100 } } }, 'the sender rate limit is raised', { rateLimit: { sender: { perMinute: 10 } } }],
  ['the rate limit removed', { rateLimit: { sender: null } }, 'the sender rate limit is removed', { rateLimit: { sender: { perMinute: 10 } } }],
  ['the bot loop breaker off', { channels: { discord: { botLoopProtection: { enabled: false } } } }, 'bot loop protection is loosened'],
  ['a toolsBySender role key lifting a deny', { tools: { toolsBySender: { 'role:777777777777777777': null } } }, 'roles 777777777777777777', { tools: { toolsBySender: { 'role:777777777777777777': { deny: ['exec'] } } } }],
  ['a toolsBySender group key lifting a deny', { tools: { toolsBySender: { 'group:ops': null } } }, 'user groups s0000eng', { accessGroups: { ops: ['usergroup:S0000ENG'] }, tools: { toolsBySender: { 'group:ops': { deny: ['exec'] } } } }],
];

/** Patches that change no decision toward allow: one owner applies them. */
const NOT_WIDENING: Array<[string, unknown]> = [
  ['a deny added', { tools: { deny: ['browser'] } }],
  ['message actions narrowed to the default', { tools: { message: { actions: { allow: ['send'] } } } }],
  ['message actions emptied', { tools: { message: { actions: { allow: [] } } } }],
  ["an agent's message actions narrowed to none", agentActions({ allow: [] })],
  ['a platform action group turned off', { channels: { discord: { actions: { reactions: false, messages: false } } } }],
  ["OpenClaw's other groups set to false", { channels: { discord: { actions: { moderation: false, roles: false } } } }],
  ['exec denied in #dev', guild({ channels: { dev: { tools: { deny: ['exec'] } } } })],
  ['an allowlist entry removed', { tools: { exec: { allowlist: [] } } }],
  ['the read-only list off', { tools: { exec: { defaultAllowlist: false } } }],
  ['web_fetch switched off', { tools: { web: { fetch: { enabled: false } } } }],
  ['a web_fetch host blocked', { tools: { web: { fetch: { ssrfPolicy: { blockedHostnames: ['internal.example'] } } } } }],
  ['a plugin denied', { plugins: { deny: ['incidents'] } }],
  ['fewer bundled skills', { skills: { allowBundled: ['github'] } }],
  ['mention gating', guild({ requireMention: false })],
  ['an approval timeout', { approvals: { exec: { timeoutSec: 60 } } }],
  ['skill prompt limits', { skills: { limits: { maxSkillsInPrompt: 20 } } }],
  ['browser without a window', { browser: { headless: false } }],
  ['queue length', { sessions: { maxQueued: 5 } }],
  ['the web chat port', { channels: { web: { port: 3100 } } }],
  ['an exec timeout', { tools: { exec: { timeoutSec: 60 } } }],
  ['a shorter network card wait', { tools: { exec: { sandbox: { network: { askTimeoutSec: 30 } } } } }],
  ['DMs closed', { channels: { discord: { dmPolicy: 'disabled', groupPolicy: 'disabled' } } }],
  ['a channel limited to a role', guild({ roles: ['777777777777777777'] })],
  ['a rate limit set', { rateLimit: { sender: { perMinute: 10, burst: 10 } } }],
  ['the refusal text', { channels: { discord: { deniedReply: 'No.' } } }],
  ['a stricter bot loop breaker', { channels: { discord: { botLoopProtection: { maxEventsPerWindow: 3 } } } }],
];

describe('config.patch widenings, judged by the decisions they move (team example)', () => {
  it.each(WIDENING)('%s', async (_what, patch, names, prefix) => {
    const from = base(prefix);
    const to = configAfter(from.text, patch);
    const { widening } = await classifyConfigChange(from.config, to.config, { baseDir: dir, env: {} });
    expect(widening.length, 'classified as not widening').toBeGreaterThan(0);
    expect(widening.map((w) => `${w.path}: ${w.why}`).join('\n')).toContain(names);
  });

  it.each(NOT_WIDENING)('%s: not widening', async (_what, patch) => {
    const from = base();
    const to = configAfter(from.text, patch);
    const { changes, widening } = await classifyConfigChange(from.config, to.config, { baseDir: dir, env: {} });
    expect(changes.length).toBeGreaterThan(0);
    expect(widening).toEqual([]);
  });
});

describe('allowBots narrowed', () => {
  it.each<[string, unknown, unknown]>([
    ['true to "mentions"', { channels: { discord: { allowBots: 'mentions' } } }, { channels: { discord: { allowBots: true } } }],
    ['"mentions" to false', { channels: { discord: { allowBots: false } } }, { channels: { discord: { allowBots: 'mentions' } } }],
    ['a channel narrowed to "mentions" under a platform true', guild({ channels: { dev: { allowBots: 'mentions' } } }), { channels: { discord: { allowBots: true } } }],
  ])('%s: not widening', async (_what, patch, prefix) => {
    const from = base(prefix);
    const to = configAfter(from.text, patch);
    const { changes, widening } = await classifyConfigChange(from.config, to.config, { baseDir: dir, env: {} });
    expect(changes.length).toBeGreaterThan(0);
    expect(widening).toEqual([]);
  });
});

describe('through the real config.patch path, with one owner', () => {
  let s: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    s = await setup();
  });
  afterAll(async () => s.close());

  it.each(WIDENING.filter(([, , , prefix]) => prefix === undefined))('%s: refused, nothing written', async (_what, patch) => {
    const outcome = await s.admin.patch(patch, s.turn(), 'agent:main:discord:direct:owner');
    expect(outcome.kind, JSON.stringify(outcome)).toBe('refused');
    expect(outcome.kind === 'refused' && outcome.reason).toContain('needs an owner other than you');
    expect(readFileSync(s.file, 'utf8')).toBe(TEAM);
    expect(await s.approvals.list()).toHaveLength(0);
  });

  it('a narrowing patch applies at once', async () => {
    const outcome = await s.admin.patch({ tools: { deny: ['browser'] } }, s.turn(), 'agent:main:discord:direct:owner');
    expect(outcome).toMatchObject({ kind: 'applied', widening: [] });
  });
});

async function setup() {
  const home = mkdtempSync(path.join(tmpdir(), 'warden-widen-admin-'));
  const cfg = path.join(home, 'warden.config.yaml');
  writeFileSync(cfg, TEAM);
  const loaded = loadConfig({ file: cfg, env: {} });
  if (!loaded.ok) throw loaded.error;
  const opened = await openWardenStore({ dataDir: path.join(home, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const live = new LiveConfig(loaded.value, TEAM);
  const approvals = new ApprovalService({ store: opened.store, config: { get owners() { return live.current().loaded.config.owners; }, get approvals() { return live.current().loaded.config.approvals; } } });
  const reloader = new ConfigReloader(live, { check: () => [], swap: () => {}, restart: async () => [], notifyOwners: async () => {}, env: {} });
  const admin = new ConfigAdmin({ live, reloader, approvals, guards: new DeciderGuards(), audit: approvals.audit, env: {}, providers: () => ['discord'] });
  const turn = () => buildTurnContext(live.current().loaded.config, { agentId: 'main', conversation: { provider: 'discord', chat: 'dm', channelId: `dm-${OWNER}` }, sender: { id: OWNER } });
  return {
    file: cfg,
    admin,
    approvals,
    turn,
    close: async () => {
      approvals.shutdown();
      await opened.store.close();
    },
  };
}
