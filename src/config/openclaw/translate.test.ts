import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../load.js';
import { OPENCLAW_OTHER_RULES, OPENCLAW_TOOLS_RULES } from './rules.js';

/**
 * Every key of OpenClaw's `tools` schema (openclaw@2026.9.6), global and per agent, with a
 * typical value: each one loads, or is refused with a message that names the OpenClaw key —
 * never a bare "unknown key".
 */
const REFUSAL = /^OpenClaw's `[^`]+` is not supported by Warden: .+ \(see docs\/openclaw-compatibility\.md\)$/s;

const GLOBAL_KEYS: Array<[string, unknown]> = [
  ['profile', 'coding'],
  ['allow', ['read']],
  ['alsoAllow', ['browser']],
  ['deny', ['exec']],
  ['byProvider', { openai: { profile: 'minimal', allow: ['read'] }, 'openai/gpt-5': { deny: ['exec'] } }],
  ['toolsBySender', { 'id:1': { deny: ['exec'] }, '*': { alsoAllow: ['read'] } }],
  ['web', { search: { enabled: true, provider: 'brave', maxResults: 5, timeoutSeconds: 30, cacheTtlMinutes: 15 } }],
  ['web', { search: { openaiCodex: { enabled: true, mode: 'cached' } } }],
  ['web', { search: { provider: 'codex' } }],
  [
    'web',
    {
      fetch: {
        enabled: true,
        provider: 'firecrawl',
        maxChars: 20000,
        maxCharsCap: 20000,
        maxResponseBytes: 750000,
        timeoutSeconds: 30,
        cacheTtlMinutes: 15,
        maxRedirects: 3,
        userAgent: 'ua',
        headers: { 'X-Routing-Target': 'staging' },
        readability: true,
        useTrustedEnvProxy: false,
        ssrfPolicy: { dangerouslyAllowPrivateNetwork: false, allowRfc2544BenchmarkRange: true, allowIpv6UniqueLocalRange: true, allowedHostnames: [], blockedHostnames: ['ads.example'] },
      },
    },
  ],
  ['web', { fetch: { useTrustedEnvProxy: true } }],
  ['web', { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } }],
  ['web', { fetch: { ssrfPolicy: { allowedHostnames: ['internal.example'] } } }],
  ['github', { profileId: 'ghp_x', kind: 'oauth', gitAuthor: { name: 'A', email: 'a@example.com' } }],
  [
    'media',
    {
      concurrency: 2,
      models: [
        { type: 'provider', provider: 'openai', model: 'gpt-4o-transcribe', capabilities: ['audio'], prompt: 'p', maxChars: 100, maxBytes: 1000, timeoutSeconds: 60, language: 'en', providerOptions: { openai: { temperature: 0 } }, baseUrl: 'https://api.openai.com/v1', headers: { 'X-A': 'b' }, profile: 'openai:audio', preferredProfile: 'x' },
        { type: 'cli', command: 'whisper', args: ['--model', 'base', '{{AttachmentPath}}'], capabilities: ['audio'], timeoutSeconds: 45 },
      ],
      image: { enabled: true, preferredModel: 'openai/gpt-6-astra', maxBytes: 1, maxChars: 500, prompt: 'p', timeoutSeconds: 60, language: 'en', providerOptions: {}, baseUrl: 'https://x.example', headers: {}, attachments: { mode: 'all', maxAttachments: 2, prefer: 'last' } },
      audio: { enabled: true, echoTranscript: true, echoFormat: '📝 "{transcript}"' },
      video: { enabled: false, maxChars: 500 },
    },
  ],
  ['media', { models: [{ provider: 'openai', request: { proxy: 'x' } }] }],
  ['media', { audio: { scope: { allow: [] } } }],
  ['media', { image: { request: {} } }],
  ['links', { enabled: true, maxLinks: 3 }],
  ['sessions', { visibility: 'tree' }],
  ['loopDetection', { enabled: false }],
  ['toolSearch', { mode: 'code', codeTimeoutMs: 10000, searchDefaultLimit: 8, maxSearchLimit: 20 }],
  ['toolSearch', true],
  ['codeMode', { enabled: true, executor: 'node' }],
  ['codeMode', false],
  ['swarm', { maxConcurrent: 8 }],
  ['swarm', false],
  ['message', { crossContext: { allowWithinProvider: false, allowAcrossProviders: true, marker: { enabled: true, prefix: '[from {channel}] ', suffix: '' } } }],
  ['message', { actions: { allow: ['send'] } }],
  ['message', { broadcast: { enabled: false } }],
  ['message', { broadcast: { enabled: true } }],
  ['agentToAgent', { enabled: true, allow: ['home', 'work'] }],
  ['elevated', { enabled: true, allowFrom: { discord: ['123'], webchat: ['session:demo'], whatsapp: ['+1555'] } }],
  ['elevated', { allowFrom: { discord: ['name:Bob'] } }],
  ...(
    [
      ['host', 'auto'],
      ['host', 'gateway'],
      ['host', 'node'],
      ['mode', 'ask'],
      ['mode', 'auto'],
      ['security', 'allowlist'],
      ['ask', 'on-miss'],
      ['node', 'build-node'],
      ['pathPrepend', ['~/bin']],
      ['safeBins', ['jq']],
      ['strictInlineEval', true],
      ['commandHighlighting', false],
      ['commandHighlighting', true],
      ['grantExpiryDays', 30],
      ['safeBinTrustedDirs', ['/opt/bin']],
      ['safeBinProfiles', { myfilter: { minPositional: 0, maxPositional: 0, allowedValueFlags: ['-n'], deniedFlags: ['-f'] } }],
      ['reviewer', { model: 'openai/gpt-5', timeoutMs: 30000 }],
      ['backgroundMs', 10000],
      ['approvalRunningNoticeMs', 0],
      ['approvalRunningNoticeMs', 10000],
      ['timeoutSeconds', 1800],
      ['cleanupMs', 1800000],
      ['notifyOnExit', false],
      ['notifyOnExit', true],
      ['notifyOnExitEmptySuccess', false],
      ['applyPatch', { enabled: true, workspaceOnly: true, allowModels: ['gpt-6-astra'] }],
      ['applyPatch', { workspaceOnly: false }],
    ] as Array<[string, unknown]>
  ).map(([k, v]): [string, unknown] => ['exec', { [k]: v }]),
  ['fs', { workspaceOnly: true }],
  ['fs', { workspaceOnly: false }],
  ['subagents', { tools: { allow: ['read'], deny: ['exec'] } }],
  ['sandbox', { tools: { alsoAllow: ['web_search'], deny: ['browser'] } }],
  ['sessions_spawn', { attachments: { enabled: false, maxTotalBytes: 5242880, maxFiles: 50, maxFileBytes: 1048576, retainOnSessionKeep: false } }],
  ['sessions_spawn', { attachments: { enabled: true } }],
  ['updatePlan', false],
  ['updatePlan', true],
];

const AGENT_KEYS: Array<[string, unknown]> = [
  ['profile', 'minimal'],
  ['allow', ['read']],
  ['deny', ['exec']],
  ['byProvider', { anthropic: { profile: 'minimal' } }],
  ['toolsBySender', { 'id:1': { deny: ['exec'] } }],
  ['codeMode', true],
  ['swarm', false],
  ['elevated', { enabled: false }],
  ['elevated', { allowFrom: { discord: ['123'] } }],
  ['exec', { security: 'deny', timeoutSeconds: 60 }],
  ['exec', { node: 'build-node' }],
  ['exec', { host: 'gateway' }],
  ['exec', { applyPatch: { enabled: false } }],
  ['github', { profileId: 'ghp_y', gitAuthor: { name: 'Review Agent' } }],
  ['fs', { workspaceOnly: true }],
  ['loopDetection', { enabled: true }],
  ['message', { crossContext: { allowWithinProvider: false } }],
  ['sandbox', { tools: { deny: ['browser'] } }],
];

const checkProblems = (result: ReturnType<typeof parseConfig>) => {
  if (result.ok) return 'loads';
  for (const p of result.error.problems) {
    expect(p.message, p.path).not.toMatch(/^unknown key/);
    expect(p.message, p.path).toMatch(REFUSAL);
  }
  return 'refused';
};

describe("OpenClaw's tools keys", () => {
  it.each(GLOBAL_KEYS.map(([k, v]) => [`tools.${k} = ${JSON.stringify(v).slice(0, 80)}`, k, v] as const))('%s loads or is refused by name', (_label, key, value) => {
    checkProblems(parseConfig({ tools: { [key]: value } }));
  });

  it.each(AGENT_KEYS.map(([k, v]) => [`agents.entries.a.tools.${k} = ${JSON.stringify(v).slice(0, 60)}`, k, v] as const))('%s loads or is refused by name', (_label, key, value) => {
    checkProblems(parseConfig({ agents: { entries: { a: { tools: { [key]: value } } } } }));
  });

  it.each<[string, unknown, 'loads' | 'refused']>([
    ['exec.host: node', { exec: { host: 'node' } }, 'refused'],
    ['codeMode on', { codeMode: 'auto' }, 'refused'],
    ['codeMode off', { codeMode: false }, 'loads'],
    ['swarm off', { swarm: { enabled: false } }, 'loads'],
    ['web_fetch onto private networks', { web: { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } } }, 'refused'],
    ['fs.workspaceOnly: true', { fs: { workspaceOnly: true } }, 'loads'],
    ['sessions_spawn attachments on', { sessions_spawn: { attachments: { enabled: true } } }, 'refused'],
  ])('%s %s', (_name, tools, expected) => {
    expect(checkProblems(parseConfig({ tools }))).toBe(expected);
  });
});

describe('OpenClaw spellings read into Warden keys', () => {
  const load = (raw: unknown) => {
    const r = parseConfig(raw);
    if (!r.ok) throw r.error;
    return r.value.config;
  };

  it.each<[string, unknown, (c: ReturnType<typeof load>) => unknown, unknown]>([
    ['exec.timeoutSeconds → timeoutSec', { tools: { exec: { timeoutSeconds: 60 } } }, (c) => c.tools.exec?.timeoutSec, 60],
    ['web.search.timeoutSeconds → timeoutSec', { tools: { web: { search: { provider: 'brave', timeoutSeconds: 9 } } } }, (c) => c.tools.web?.search?.timeoutSec, 9],
    ['web.fetch.timeoutSeconds → timeoutSec', { tools: { web: { fetch: { timeoutSeconds: 7 } } } }, (c) => c.tools.web?.fetch?.timeoutSec, 7],
    ['media timeoutSeconds → timeoutSec', { tools: { media: { models: [{ provider: 'openai', timeoutSeconds: 5 }], audio: { timeoutSeconds: 6 } } } }, (c) => [c.tools.media?.models[0]?.timeoutSec, c.tools.media?.audio?.timeoutSec], [5, 6]],
    ['exec.mode: ask → allowlist + on-miss', { tools: { exec: { mode: 'ask' } } }, (c) => [c.tools.exec?.security, c.tools.exec?.ask], ['allowlist', 'on-miss']],
    ['exec.mode: full → full + off', { tools: { exec: { mode: 'full' } } }, (c) => [c.tools.exec?.security, c.tools.exec?.ask], ['full', 'off']],
    ['exec.mode: auto → a human instead of a reviewer', { tools: { exec: { mode: 'auto' } } }, (c) => [c.tools.exec?.security, c.tools.exec?.ask], ['allowlist', 'on-miss']],
    ['exec.host: auto → Warden picks', { tools: { exec: { host: 'auto' } } }, (c) => c.tools.exec?.host, undefined],
    ['applyPatch.enabled: false', { tools: { exec: { applyPatch: { enabled: false } } } }, (c) => c.tools.exec?.applyPatch.enabled, false],
    ['elevated.allowFrom.webchat → web', { tools: { elevated: { allowFrom: { webchat: ['local'], web: ['other'] } } } }, (c) => c.tools.elevated?.allowFrom, { web: ['other', 'local'] }],
    ['skills.load.extraDirs → skills.extraDirs', { skills: { load: { extraDirs: ['~/skills'] } } }, (c) => c.skills.extraDirs, ['~/skills']],
    ['updatePlan: false → a deny of progress_card (its former id)', { tools: { deny: ['exec'], updatePlan: false } }, (c) => c.tools.deny, ['exec', 'progress_card']],
    ['agents.entries → agents.list', { agents: { entries: { main: { default: true }, work: { tools: { profile: 'minimal' } } } } }, (c) => c.agents.list.map((a) => [a.id, a.tools?.profile]), [['main', undefined], ['work', 'minimal']]],
  ])('%s', (_name, raw, read, expected) => {
    expect(read(load(raw))).toEqual(expected);
  });

  it('view_image is the image tool', async () => {
    const { normalizeToolName } = await import('../../policy/tool-names.js');
    expect(normalizeToolName('view_image')).toBe('image');
  });

  it.each<[string, unknown, string, RegExp]>([
    ['both spellings of one key', { tools: { exec: { timeoutSeconds: 5, timeoutSec: 4 } } }, 'tools.exec.timeoutSeconds', /timeoutSeconds is OpenClaw's name for tools\.exec\.timeoutSec, which is set too: keep one/],
    ['mode with security', { tools: { exec: { mode: 'ask', security: 'full' } } }, 'tools.exec.mode', /mode cannot be combined with security or ask/],
    ['a bad value under the OpenClaw name', { tools: { exec: { timeoutSeconds: -1 } } }, 'tools.exec.timeoutSeconds', /Too small/],
    ['a bad value inside agents.entries', { agents: { entries: { w: { tools: { exec: { timeoutSeconds: 'x' } } } } } }, 'agents.entries.w.tools.exec.timeoutSeconds', /expected number/],
    ['updatePlan: true', { tools: { updatePlan: true } }, 'tools.updatePlan', /progress_card is offered by the tool policy/],
    ['both rosters', { agents: { entries: { a: {} }, list: [{ id: 'b' }] } }, 'agents.entries', /two spellings of the roster/],
    ['plugin config', { plugins: { entries: { brave: { config: { webSearch: { apiKey: 'x' } } } } } }, 'plugins.entries.brave.config.webSearch', /provider keys come from the environment/],
  ])('%s is reported where it was written', (_name, raw, where, message) => {
    const r = parseConfig(raw);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const problem = r.error.problems.find((p) => p.path === where);
    expect(problem, JSON.stringify(r.error.problems)).toBeDefined();
    expect(problem!.message).toMatch(message);
  });
});

describe('the OpenClaw compatibility table (docs/openclaw-compatibility.md)', () => {
  const section = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/openclaw-compatibility.md'), 'utf8');
  it.each([...OPENCLAW_TOOLS_RULES.map((r) => `tools.${r.path}`), ...OPENCLAW_OTHER_RULES.map((r) => r.path)].filter((p, i, all) => all.indexOf(p) === i))('names %s', (key) => {
    expect(section).toContain(`\`${key.replace(/^tools\.(?=sandbox$)/, 'agents.*.tools.')}\``);
  });
});
