import { describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfig, type WardenConfigInput } from '../config/index.js';
import { applyMergePatch } from '../config/edit/merge-patch.js';
import { classifyConfigChange } from './widening.js';

const BASE: WardenConfigInput = {
  owners: { discord: ['1001', '1002'] },
  models: { default: 'anthropic/claude-sonnet-4-5' },
  tools: { profile: 'coding', exec: { host: 'sandbox', security: 'allowlist', ask: 'on-miss', allowlist: [{ pattern: '/usr/bin/git', argPattern: 'status*' }] } },
  channels: {
    discord: {
      token: 'x',
      guilds: {
        '111': { tools: { deny: ['browser'] }, channels: { dev: { tools: { allow: ['*'] } } } },
        '222': { tools: { deny: ['exec', 'process'] } },
      },
    },
  },
};

const load = (input: unknown): WardenConfig => {
  const r = parseConfig(input);
  if (!r.ok) throw new Error(r.error.message);
  return r.value.config;
};
const base = load(BASE);
const widens = async (patch: unknown) => (await classifyConfigChange(base, load(applyMergePatch(BASE, patch)))).widening;

const g = (guild: string, value: unknown) => ({ channels: { discord: { guilds: { [guild]: value } } } });

/** [what, patch, widens?, a path or reason the widening must name] */
const CASES: Array<[string, unknown, boolean, string?]> = [
  ['a deny added to a channel', g('111', { channels: { general: { tools: { deny: ['exec'] } } } }), false],
  ['a deny entry removed', g('222', { tools: { deny: ['process'] } }), true, 'exec'],
  // A guild's deny holds in its channels: a channel's own tools block no longer undoes it.
  ['a channel scope under a guild that denies', g('222', { channels: { general: { tools: { deny: ['browser'] } } } }), false],
  ['an allow-all channel where the guild denies', g('222', { channels: { ops: { tools: { allow: ['*'] } } } }), false],
  ['a global deny', { tools: { deny: ['web_fetch'] } }, false],
  ['a wider profile', { tools: { profile: 'full' } }, true, 'newly on the tool surface'],
  ['a narrower profile', { tools: { profile: 'minimal' } }, false],
  ['alsoAllow adds a tool', { tools: { alsoAllow: ['browser'] } }, true, 'browser'],
  ['a sender allowed what the channel denies', g('222', { toolsBySender: { 'id:42': { allow: ['*'] } } }), true, 'sender 42'],
  ['an owner added', { owners: { discord: ['1001', '1002', '1003'] } }, true, 'owners.discord'],
  ['an owner removed', { owners: { discord: ['1001'] } }, false],
  ['an owner on another platform', { owners: { slack: ['U1'] } }, true, 'owners.slack'],
  ['an approver added', { approvals: { approvers: { discord: ['1001', '2000'] } } }, true, 'approvals.approvers.discord'],
  ['approvers narrowed to one owner', { approvals: { approvers: { discord: ['1001'] } } }, false],
  ['exec security full', { tools: { exec: { security: 'full' } } }, true, 'tools.exec.security'],
  ['exec security deny', { tools: { exec: { security: 'deny' } } }, false],
  ['ask off (misses refused)', { tools: { exec: { ask: 'off' } } }, false],
  ['ask always', { tools: { exec: { ask: 'always' } } }, false],
  ['askFallback allowlist', { tools: { exec: { askFallback: 'allowlist' } } }, true, 'tools.exec.askFallback'],
  ['an allowlist entry added', { tools: { exec: { allowlist: [{ pattern: '/usr/bin/git', argPattern: 'status*' }, { pattern: '/usr/bin/curl' }] } } }, true, '/usr/bin/curl'],
  ['an allowlist entry widened to trust repo config', { tools: { exec: { allowlist: [{ pattern: '/usr/bin/git', argPattern: 'status*', trustRepoConfig: true }] } } }, true, 'trustRepoConfig'],
  ['an allowlist entry removed', { tools: { exec: { allowlist: [] } } }, false],
  ['a safe bin added', { tools: { exec: { safeBins: ['wc', 'jq'] } } }, true, 'jq'],
  ['exec leaves the sandbox', { tools: { exec: { host: 'gateway' } } }, true, 'tools.exec.host'],
  ['inline code no longer asks', { tools: { exec: { strictInlineEval: false } } }, true, 'strictInlineEval'],
  ['an agent exec override', { agents: { list: [{ id: 'main', tools: { exec: { security: 'full' } } }] } }, true, 'security allowlist → full'],
  ['an exec timeout', { tools: { exec: { timeoutSec: 60 } } }, false],
  ['elevation for someone', { tools: { elevated: { allowFrom: { discord: ['1001'] } } } }, true, 'tools.elevated'],
  ['browser private networks', { browser: { ssrfPolicy: { allowPrivateNetwork: true } } }, true, 'browser.ssrfPolicy.allowPrivateNetwork'],
  ['browser hostname allowlist dropped', { browser: { ssrfPolicy: { hostnameAllowlist: [] } } }, false],
  ['the web chat bind', { channels: { web: { host: '0.0.0.0', token: 'a-long-enough-token' } } }, true, 'channels.web.host'],
  ['the web chat token', { channels: { web: { token: 'another-token-value' } } }, true, 'channels.web.token'],
  ['the web chat port', { channels: { web: { port: 3100 } } }, false],
  ['the HTTP API on', { gateway: { http: { enabled: true, token: 'sixteen-chars-token' } } }, true, 'gateway.http.enabled'],
  ['nodes may pair', { gateway: { nodes: { enabled: true } } }, true, 'gateway.nodes.enabled'],
  ['a plugin folder', { plugins: { paths: ['./plugins'] } }, true, 'plugins.paths'],
  ['session visibility', { tools: { sessions: { visibility: 'all' } } }, true, 'tools.sessions.visibility'],
  ['a workspace moved', { agents: { defaults: { workspace: '/' } } }, true, 'agents.defaults.workspace'],
  ['another model of the same provider', { models: { default: 'anthropic/claude-opus-4' } }, false],
  ['a model provider pointed at another host', { models: { providers: { anthropic: { baseUrl: 'https://collector.example/v1' } } } }, true, 'models.providers.anthropic.baseUrl'],
  ['a provider key read from another variable', { models: { providers: { anthropic: { apiKeyEnv: 'DISCORD_TOKEN' } } } }, true, 'apiKeyEnv'],
  ['fetch headers added', { tools: { web: { fetch: { headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' } } } } }, true, 'headers'],
  ['a context window', { models: { contextWindow: 64000 } }, false],
  ['an approval timeout', { approvals: { exec: { timeoutSec: 60 } } }, false],
  ['mention gating', g('111', { requireMention: false }), false],
];

describe('classifyConfigChange: does a config change widen security?', () => {
  it.each(CASES)('%s', async (_what, patch, expected, names) => {
    const widening = await widens(patch);
    expect(widening.length > 0, JSON.stringify(widening)).toBe(expected);
    if (names) expect(JSON.stringify(widening)).toContain(names);
  });

  it('lists every changed leaf, widening or not', async () => {
    const r = await classifyConfigChange(base, load(applyMergePatch(BASE, { tools: { deny: ['exec'] }, sessions: { maxQueued: 5 } })));
    expect(r.changes.map((c) => c.path.join('.'))).toEqual(['tools.deny', 'sessions.maxQueued']);
    expect(r.widening).toEqual([]);
  });
});
