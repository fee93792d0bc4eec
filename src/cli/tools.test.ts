import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { main } from '../cli.js';

const CONFIG = `
owners: { discord: ["42"] }
tools:
  profile: coding
  alsoAllow: [browser]
channels:
  discord:
    guilds:
      "111":
        tools: { deny: [browser] }
        channels:
          general: { tools: { deny: [exec, process] } }
          dev: { tools: { deny: [tts] } }
agents:
  list:
    - id: main
      default: true
    - id: ops
      tools: { profile: messaging }
`;

function workdir(files: Record<string, string>): string {
  const cwd = mkdtempSync(path.join(tmpdir(), 'warden-tools-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(cwd, name), text);
  return cwd;
}

async function runTools(argv: string[], files: Record<string, string> = { 'warden.config.yaml': CONFIG }) {
  const cwd = workdir(files);
  let stdout = '';
  let stderr = '';
  const code = await main(['tools', ...argv], { cwd, env: {}, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

interface Answer {
  tools: string[];
  removed: { tool: string; by: string }[];
  unavailable: { tool: string; why: string }[];
  warnings: string[];
  explain?: { tool: string; verdict: string; by?: string; steps: { step: string; outcome: string; rule: string; key?: string; by?: string }[] };
}

/** What the policy did with a tool: the removing label, or `kept` (offered, or kept but unavailable here). */
function policyFate(answer: Answer, tool: string): string {
  const removed = answer.removed.find((r) => r.tool === tool);
  if (removed) return removed.by;
  return answer.tools.includes(tool) || answer.unavailable.some((u) => u.tool === tool) ? 'kept' : 'absent';
}

const discord = ['--provider', 'discord', '--guild', '111'];

describe('warden tools (in process)', () => {
  it.each([
    ['exec denied in #general', [...discord, '--channel-name', 'general'], 'exec', 'channels.discord.guilds.111.channels.general.tools.deny'],
    ['exec allowed in #dev of the same guild', [...discord, '--channel-name', 'dev'], 'exec', 'kept'],
    ["the guild's browser deny holds in #dev, whose own tools allow *", [...discord, '--channel-name', 'dev'], 'browser', 'channels.discord.guilds.111.tools.deny'],
    ['another channel gets the guild policy', [...discord, '--channel-name', 'random'], 'browser', 'channels.discord.guilds.111.tools.deny'],
    ['a thread follows its parent', [...discord, '--channel-name', 'general', '--thread', '333'], 'exec', 'channels.discord.guilds.111.channels.general.tools.deny'],
    ['a non-owner never sees cron: not even as removed', [...discord, '--channel-name', 'dev', '--sender', '7'], 'cron', 'absent'],
    ['an owner sees cron', [...discord, '--channel-name', 'dev', '--sender', '42'], 'cron', 'kept'],
    ["the agent's profile overrides the global one", ['--agent', 'ops'], 'exec', 'tools.profile'],
    ['apply_patch needs an allowed model', ['--model', 'anthropic/claude-sonnet-4-5'], 'apply_patch', 'model-provider'],
    ['apply_patch with an OpenAI model', ['--model', 'openai/gpt-5'], 'apply_patch', 'kept'],
    ['a leaf subagent loses sessions_spawn', ['--spawn-depth', '1'], 'sessions_spawn', 'subagent deny list'],
  ])('%s', async (_name, argv, tool, expected) => {
    const { code, stdout } = await runTools([...argv, '--json']);
    expect(code).toBe(0);
    expect(policyFate(JSON.parse(stdout) as Answer, tool)).toBe(expected);
  });

  it('answers the JSON contract with sorted tools and labelled removals', async () => {
    const { stdout } = await runTools(['--json']);
    const answer = JSON.parse(stdout) as Answer;
    expect(Object.keys(answer)).toEqual(['tools', 'removed', 'unavailable', 'warnings', 'agent', 'binding', 'access']);
    expect((answer as unknown as { access: string }).access).toBe('allowed (web) by channels.web');
    expect(answer.tools).toEqual([...answer.tools].sort());
    expect(answer.removed).toContainEqual({ tool: 'tts', by: 'tools.profile' });
    for (const u of answer.unavailable) expect(u.why).not.toBe('');
  });

  it('--explain names the step and the config line that decided', async () => {
    const { code, stdout } = await runTools([...discord, '--channel-name', 'general', '--explain', 'bash', '--json']);
    expect(code).toBe(0);
    const { explain } = JSON.parse(stdout) as Answer;
    expect(explain).toMatchObject({ tool: 'exec', verdict: 'removed', by: 'channels.discord.guilds.111.channels.general.tools.deny' });
    expect(explain!.steps.find((s) => s.outcome === 'removed')).toEqual({
      step: 'group tools.allow',
      outcome: 'removed',
      rule: 'denied by channels.discord.guilds.111.channels.general.tools.deny[0] = "exec"',
      key: 'channels.discord.guilds.111.channels.general.tools.deny[0]',
      by: 'channels.discord.guilds.111.channels.general.tools.deny',
    });
  });

  it('prints a readable answer without --json', async () => {
    const { code, stdout } = await runTools([...discord, '--channel-name', 'general', '--explain', 'exec']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^exec: removed by channels\.discord\.guilds\.111\.channels\.general\.tools\.deny$/m);
    expect(stdout).toMatch(/group tools\.allow\s+removed\s+denied by channels\.discord\.guilds\.111\.channels\.general\.tools\.deny\[0\] = "exec"/);
    expect(stdout).toMatch(/^removed \(\d+\):$/m);
    expect(stdout).toMatch(/^ {2}exec\s+by channels\.discord\.guilds\.111\.channels\.general\.tools\.deny$/m);
  });

  it('exits 2 naming every bad flag, and the known agents for an unknown one', async () => {
    const { code, stdout, stderr } = await runTools(['--agent', 'qa', '--provider', 'irc', '--chanel', 'x', '--spawn-depth', '-1', '--explain', 'brwser']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('--agent: unknown agent "qa"; known agents: main, ops');
    expect(stderr).toContain('--provider: expected one of discord, slack, web, http, got "irc"');
    expect(stderr).toContain('unknown option --chanel (did you mean --channel?)');
    expect(stderr).toContain('--spawn-depth: expected a whole number ≥ 0, got "-1"');
    expect(stderr).toContain('--explain: unknown tool "brwser" (did you mean "browser"?)');
  });

  it.each([
    ['malformed YAML', 'tools: [unclosed\n', /malformed YAML/],
    ['an unknown key with a hint', 'tools:\n  profil: coding\n', /tools\.profil: unknown key \(did you mean "profile"\?\)/],
    ['an unknown profile', 'tools:\n  profile: developer\n', /tools\.profile: unknown profile "developer"/],
    ['an invalid glob', 'tools:\n  deny: ["web_[x"]\n', /tools\.deny\[0\]: invalid glob "web_\[x"/],
    ['a wrong type', 'tools:\n  deny: exec\n', /tools\.deny: /],
  ])('exits 2 on %s with the key path', async (_name, yaml, message) => {
    const { code, stdout, stderr } = await runTools(['--json'], { 'warden.config.yaml': yaml });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
  });

  it('exits 3 with the guard error when an explicit allowlist keeps nothing', async () => {
    const { code, stdout } = await runTools(['--config', 'warden.config.json5', '--json'], { 'warden.config.json5': '{ tools: { allow: ["jira_*"] } }' });
    expect(code).toBe(3);
    expect(JSON.parse(stdout)).toEqual({
      error:
        'No callable tools remain after resolving explicit tool allowlist (tools.allow: jira_*); no registered tools matched. Fix the allowlist or enable the plugin that registers the requested tool.',
    });
  });

  it('reports the declared tools of a plugin without code as unavailable, with why', async () => {
    const cwd = workdir({ 'warden.config.yaml': 'plugins:\n  paths: [plugins]\ntools:\n  profile: coding\n  alsoAllow: [jira]\n' });
    mkdirSync(path.join(cwd, 'plugins', 'jira'), { recursive: true });
    // contracts.hooks: [] — it enforces nothing, so Warden runs without it (a policy plugin would stop it).
    writeFileSync(path.join(cwd, 'plugins', 'jira', 'warden.plugin.json'), '{ id: "jira", contracts: { tools: ["jira_create"], hooks: [] } }');
    let stdout = '';
    const code = await main(['tools', '--json'], { cwd, env: {}, stdout: (t) => (stdout += t), stderr: () => {} });
    expect(code).toBe(0);
    const answer = JSON.parse(stdout) as Answer;
    expect(answer.unavailable).toContainEqual({ tool: 'jira_create', why: 'plugin jira did not load: no entry module (index.ts, index.js, index.mjs, index.cjs or package.json warden.extensions)' });
    expect(answer.warnings).toContain('plugin jira cannot load: no entry module (index.ts, index.js, index.mjs, index.cjs or package.json warden.extensions)');
  });

  it('offers a loaded plugin tool and explains it through the same steps', async () => {
    const cwd = workdir({ 'warden.config.yaml': 'plugins:\n  paths: [plugins]\ntools:\n  profile: coding\n  alsoAllow: [jira]\n' });
    mkdirSync(path.join(cwd, 'plugins', 'jira'), { recursive: true });
    writeFileSync(path.join(cwd, 'plugins', 'jira', 'warden.plugin.json'), '{ id: "jira", contracts: { tools: ["jira_create"] } }');
    writeFileSync(
      path.join(cwd, 'plugins', 'jira', 'index.mjs'),
      'export function register(api) { api.registerTool({ name: "jira_create", description: "d", parameters: { type: "object", properties: {} }, execute: () => ({ content: [] }) }); }',
    );
    let stdout = '';
    expect(await main(['tools', '--json', '--explain', 'jira_create'], { cwd, env: {}, stdout: (t) => (stdout += t), stderr: () => {} })).toBe(0);
    const answer = JSON.parse(stdout) as Answer & { explain: { verdict: string; steps: Array<{ step: string; outcome: string; rule: string }> } };
    expect(answer.tools).toContain('jira_create');
    expect(answer.explain.verdict).toBe('available');
    expect(answer.explain.steps.find((s) => s.step === 'tools.profile')).toMatchObject({ outcome: 'kept', rule: expect.stringContaining('jira') });
  });
});

describe('warden tools (the real CLI)', () => {
  const bin = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));

  it('answers --json for a channel scope', async () => {
    const cwd = workdir({ 'warden.config.yaml': CONFIG });
    const { exitCode, stdout } = await execa('node', [bin, 'tools', ...discord, '--channel-name', 'general', '--json'], { cwd, reject: false });
    expect(exitCode).toBe(0);
    const answer = JSON.parse(stdout) as Answer;
    expect(policyFate(answer, 'exec')).toBe('channels.discord.guilds.111.channels.general.tools.deny');
    expect(policyFate(answer, 'browser')).toBe('channels.discord.guilds.111.tools.deny');
  });

  it('exits 2 with the problems on stderr', async () => {
    const cwd = workdir({ 'warden.config.yaml': 'tools:\n  alow: [read]\n' });
    const { exitCode, stderr, stdout } = await execa('node', [bin, 'tools', '--json'], { cwd, reject: false });
    expect(exitCode).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('tools.alow: unknown key (did you mean "allow"?)');
  });

  it('exits 3 with the JSON error from the guard', async () => {
    const cwd = workdir({ 'warden.config.yaml': 'tools:\n  allow: [nothing_here]\n' });
    const { exitCode, stdout } = await execa('node', [bin, 'tools', '--json'], { cwd, reject: false });
    expect(exitCode).toBe(3);
    expect(JSON.parse(stdout).error).toMatch(/^No callable tools remain after resolving explicit tool allowlist \(tools\.allow: nothing_here\); no registered tools matched\./);
  });
});
