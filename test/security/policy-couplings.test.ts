import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { formatToolReport } from '../../src/gateway/commands.js';
import type { TurnContext } from '../../src/policy/context.js';
import { TOOL_COUPLINGS } from '../../src/policy/policy.js';
import type { ExplainStep, SurfaceResult } from '../../src/policy/surface.js';
import { fate, surface } from '../../src/policy/testing.js';
import { CORE_TOOLS } from '../../src/policy/catalog.js';

/**
 * A tool that can do what a denied tool does must go with it: `deny: [write]` may not leave
 * `edit` or `apply_patch`, `deny: [exec]` may not leave `process` (which writes to the stdin of
 * a shell exec started), `deny: [read]` may not leave `image` or `pdf` (which hand a workspace
 * file to the model). Tried at every pipeline step, from both sides (deny the leader, allow
 * only the follower), and the removal must name the config key that did it — the deny list's
 * key path, never the step's `…allow` label — in `removed[].by`, the `--explain` trace, the CLI
 * text and the `/tools` chat answer.
 */

interface Lists {
  allow?: string[];
  deny?: string[];
}

interface StepCase {
  name: string;
  /** The step's label in the trace. */
  label: string;
  /** What `removed[].by` says when a deny of this step removed a tool. */
  denyBy: string;
  /** How the trace names the deny entry: its config key, or the built-in rule. */
  denyEntry: (index: number) => string;
  /** Whether the step can carry a deny list / an allowlist. */
  deny: boolean;
  build: (lists: Lists) => { raw: Record<string, unknown>; ctx: Partial<TurnContext> };
}

const noCtx = {};
const discordGeneral = { provider: 'discord', chat: 'channel' as const, guildId: '111', channelName: 'general' };
const key = (base: string) => (i: number) => `${base}[${i}]`;

const STEPS: StepCase[] = [
  {
    name: 'profile + alsoAllow',
    label: 'tools.profile',
    denyBy: '',
    denyEntry: () => '',
    deny: false,
    build: (l) => ({ raw: { tools: { profile: 'minimal', alsoAllow: l.allow } }, ctx: noCtx }),
  },
  {
    name: 'byProvider profile + alsoAllow',
    label: 'tools.byProvider.profile',
    denyBy: '',
    denyEntry: () => '',
    deny: false,
    build: (l) => ({ raw: { tools: { byProvider: { openai: { profile: 'minimal', alsoAllow: l.allow } } } }, ctx: noCtx }),
  },
  { name: 'global', label: 'tools.allow', denyBy: 'tools.deny', denyEntry: key('tools.deny'), deny: true, build: (l) => ({ raw: { tools: l }, ctx: noCtx }) },
  {
    name: 'global byProvider',
    label: 'tools.byProvider.allow',
    denyBy: 'tools.byProvider.openai.deny',
    denyEntry: key('tools.byProvider.openai.deny'),
    deny: true,
    build: (l) => ({ raw: { tools: { byProvider: { openai: l } } }, ctx: noCtx }),
  },
  {
    name: 'agent',
    label: 'agents.main.tools.allow',
    denyBy: 'agents.list[0].tools.deny',
    denyEntry: key('agents.list[0].tools.deny'),
    deny: true,
    build: (l) => ({ raw: { agents: { list: [{ id: 'main', tools: l }] } }, ctx: noCtx }),
  },
  {
    name: 'agent byProvider',
    label: 'agents.main.tools.byProvider.allow',
    denyBy: 'agents.list[0].tools.byProvider["openai/gpt-5"].deny',
    denyEntry: key('agents.list[0].tools.byProvider["openai/gpt-5"].deny'),
    deny: true,
    build: (l) => ({ raw: { agents: { list: [{ id: 'main', tools: { byProvider: { 'openai/gpt-5': l } } }] } }, ctx: noCtx }),
  },
  {
    name: 'Discord channel scope',
    label: 'group tools.allow',
    denyBy: 'channels.discord.guilds.111.channels.general.tools.deny',
    denyEntry: key('channels.discord.guilds.111.channels.general.tools.deny'),
    deny: true,
    build: (l) => ({ raw: { channels: { discord: { guilds: { '111': { channels: { general: { tools: l } } } } } } }, ctx: discordGeneral }),
  },
  {
    name: 'toolsBySender inside a guild scope',
    label: 'group tools.allow',
    denyBy: 'channels.discord.guilds.111.toolsBySender["id:7"].deny',
    denyEntry: key('channels.discord.guilds.111.toolsBySender["id:7"].deny'),
    deny: true,
    build: (l) => ({ raw: { channels: { discord: { guilds: { '111': { toolsBySender: { 'id:7': l } } } } } }, ctx: { ...discordGeneral, senderId: '7' } }),
  },
  {
    name: 'Slack channel scope',
    label: 'group tools.allow',
    denyBy: 'channels.slack.channels["#ops"].tools.deny',
    denyEntry: key('channels.slack.channels["#ops"].tools.deny'),
    deny: true,
    build: (l) => ({ raw: { channels: { slack: { channels: { '#ops': { tools: l } } } } }, ctx: { provider: 'slack', chat: 'channel', channelId: 'C1', channelName: 'ops' } }),
  },
  {
    name: 'web chat scope',
    label: 'group tools.allow',
    denyBy: 'channels.web.tools.deny',
    denyEntry: key('channels.web.tools.deny'),
    deny: true,
    build: (l) => ({ raw: { channels: { web: { tools: l } } }, ctx: { provider: 'web' } }),
  },
  {
    name: 'global toolsBySender',
    label: 'tools.toolsBySender',
    denyBy: 'tools.toolsBySender["id:7"].deny',
    denyEntry: key('tools.toolsBySender["id:7"].deny'),
    deny: true,
    build: (l) => ({ raw: { tools: { toolsBySender: { 'id:7': l } } }, ctx: { senderId: '7' } }),
  },
  {
    name: "the agent's toolsBySender",
    label: 'tools.toolsBySender',
    denyBy: 'agents.list[0].tools.toolsBySender["username:ann"].deny',
    denyEntry: key('agents.list[0].tools.toolsBySender["username:ann"].deny'),
    deny: true,
    build: (l) => ({ raw: { agents: { list: [{ id: 'main', tools: { toolsBySender: { 'username:ann': l } } }] } }, ctx: { senderId: '7', senderUsername: 'ann' } }),
  },
  {
    name: 'sandbox',
    label: 'sandbox tools.allow',
    denyBy: 'tools.sandbox.tools.deny',
    denyEntry: key('tools.sandbox.tools.deny'),
    deny: true,
    build: (l) => ({ raw: { tools: { sandbox: { tools: l } } }, ctx: { sandboxed: true } }),
  },
  {
    name: 'subagent',
    label: 'subagent tools.allow',
    denyBy: 'tools.subagents.tools.deny',
    denyEntry: key('tools.subagents.tools.deny'),
    deny: true,
    build: (l) => ({ raw: { tools: { subagents: { tools: l } } }, ctx: { spawnDepth: 1 } }),
  },
  {
    name: "inherited (the parent's surface and denies)",
    label: 'inherited tools',
    denyBy: 'inherited tools',
    denyEntry: () => "the parent's denies",
    deny: true,
    build: (l) => ({
      raw: {},
      ctx: { spawnDepth: 1, inherited: { ...(l.allow ? { allow: l.allow } : {}), deny: l.deny ?? [] } },
    }),
  },
  {
    name: 'runtime toolsAllow',
    label: 'before_prompt_build toolsAllow',
    denyBy: '',
    denyEntry: () => '',
    deny: false,
    build: (l) => ({ raw: {}, ctx: { toolsAllow: [l.allow ?? []] } }),
  },
];

const COUPLED = TOOL_COUPLINGS.map((c) => [c.follows, c.tool, c.mode] as const);

function run(step: StepCase, lists: Lists): SurfaceResult {
  const { raw, ctx } = step.build(lists);
  return surface(raw, ctx);
}

/** The trace entry of the step under test (the first one with its label that was judged). */
function stepTrace(result: SurfaceResult, tool: string, label: string): ExplainStep {
  const found = result.trace(tool).find((s) => s.step === label && s.outcome !== 'not reached' && s.outcome !== 'skipped');
  if (!found) throw new Error(`no judged ${label} step for ${tool}: ${JSON.stringify(result.trace(tool))}`);
  return found;
}

const denySteps = STEPS.filter((s) => s.deny);
const cases = <T>(steps: StepCase[], f: (s: StepCase, leader: string, follower: string, mode: string) => T[]) =>
  steps.flatMap((s) => COUPLED.flatMap(([leader, follower, mode]) => f(s, leader, follower, mode)));

describe('a deny of the leader removes the follower, labelled with the deny key path', () => {
  it.each(cases(denySteps, (s, leader, follower) => [[s.name, leader, follower, s] as const]))('%s: deny [%s] removes %s', (_n, leader, follower, step) => {
    const result = run(step, { deny: [leader] });
    expect(fate(result, leader)).toBe(step.denyBy);
    expect(fate(result, follower)).toBe(step.denyBy);
    expect(step.denyBy).not.toMatch(/\.allow$/);
    const entry = step.denyEntry(0);
    const builtin = step.label === 'inherited tools';
    expect(stepTrace(result, follower, step.label)).toEqual({
      step: step.label,
      outcome: 'removed',
      rule: builtin ? `denied by ${entry}: "${leader}"; ${follower} follows ${leader}` : `denied by ${entry} = "${leader}"; ${follower} follows ${leader}`,
      ...(builtin ? {} : { key: entry }),
      by: step.denyBy,
    });
    // Every later step says what removed it, by the same label.
    const later = result.trace(follower).filter((t) => t.outcome === 'not reached');
    for (const t of later) expect(t.rule).toBe(`already removed by ${step.denyBy}`);
  });
});

describe('a deny of the follower never takes the leader', () => {
  it.each(cases(denySteps, (s, leader, follower) => [[s.name, follower, leader, s] as const]))('%s: deny [%s] leaves %s', (_n, follower, leader, step) => {
    const result = run(step, { deny: [follower] });
    expect(fate(result, follower)).toBe(step.denyBy);
    expect(fate(result, leader)).toBe('kept');
  });
});

describe('an allow of the leader keeps the follower, unless it couples on the deny side only', () => {
  it.each(cases(STEPS, (s, leader, follower, mode) => [[s.name, leader, follower, mode, s] as const]))('%s: allow [%s, session_status] and %s (%s)', (_n, leader, follower, mode, step) => {
    const result = run(step, { allow: [leader, 'session_status'] });
    expect(fate(result, leader)).toBe('kept');
    if (mode === 'deny') {
      expect(fate(result, follower)).toBe(step.label);
      return;
    }
    expect(fate(result, follower)).toBe('kept');
    const traced = stepTrace(result, follower, step.label);
    expect(traced.outcome).toBe('kept');
    if (step.label !== 'before_prompt_build toolsAllow') expect(traced.rule).toMatch(new RegExp(`; ${follower} follows ${leader}$`));
  });
});

describe('an allow of the follower alone: only process needs its leader (it never runs without exec)', () => {
  it.each(cases(STEPS, (s, leader, follower, mode) => [[s.name, follower, leader, mode, s] as const]))('%s: allow [%s, session_status] without %s (%s)', (_n, follower, leader, mode, step) => {
    const result = run(step, { allow: [follower, 'session_status'] });
    expect(fate(result, leader)).toBe(step.label);
    if (mode !== 'requires') {
      expect(fate(result, follower)).toBe('kept');
      return;
    }
    expect(fate(result, follower)).toBe(step.label);
    if (step.label === 'before_prompt_build toolsAllow') return;
    const traced = stepTrace(result, follower, step.label);
    expect(traced).toMatchObject({ outcome: 'removed', by: step.label });
    expect(traced.rule).toMatch(new RegExp(`^${follower} follows ${leader}, which is not in (the allowlist|profile "minimal")`));
  });
});

describe('invariants over every step', () => {
  const lists: Lists[] = [{ deny: ['exec'] }, { deny: ['write'] }, { deny: ['read'] }, { allow: ['process'] }, { allow: ['process', 'edit', 'pdf'] }, { allow: ['*'], deny: ['group:runtime'] }, { deny: ['bash'] }];
  it.each(STEPS.flatMap((s) => lists.map((l) => [s.name, JSON.stringify(l), s, l] as const)))('%s with %s: process only beside exec, no follower beside a denied leader', (_n, _l, step, l) => {
    if (!step.deny && l.deny) return;
    const result = run(step, l);
    if (result.tools.includes('process')) expect(result.tools).toContain('exec');
    for (const r of result.removed) {
      expect(r.by).not.toBe('');
      const decisive = result.trace(r.tool).find((t) => t.outcome === 'removed')!;
      expect(decisive.by).toBe(r.by);
      // A deny is never reported under an allow label: a config deny by its list's key path, a built-in one by its rule.
      if (decisive.rule.startsWith('denied by') && decisive.key) expect(r.by).toBe(decisive.key.replace(/\[\d+\]$/, ''));
      if (decisive.rule.startsWith('denied by')) expect(r.by).not.toMatch(/allow$/);
    }
    const removed = new Set(result.removed.filter((r) => r.by.endsWith('.deny')).map((r) => r.tool));
    for (const [leader, follower] of COUPLED) if (removed.has(leader)) expect(removed.has(follower), `${follower} beside denied ${leader}`).toBe(true);
  });

  it('every coupling names two core tools, and no follower leads another coupling', () => {
    const ids = new Set(CORE_TOOLS.map((t) => t.id));
    for (const c of TOOL_COUPLINGS) expect([ids.has(c.tool), ids.has(c.follows)], `${c.tool} → ${c.follows}`).toEqual([true, true]);
    const followers = new Set(TOOL_COUPLINGS.map((c) => c.tool));
    for (const c of TOOL_COUPLINGS) expect(followers.has(c.follows), c.follows).toBe(false);
  });
});

describe('what the operator reads: warden tools --explain and /tools', () => {
  const CONFIG = `
tools:
  deny: [write]
  toolsBySender: { "id:7": { deny: [exec] } }
agents:
  list:
    - id: main
      tools: { byProvider: { openai: { deny: [exec] } } }
channels:
  discord:
    guilds:
      "111":
        channels:
          general: { tools: { deny: [exec, read] } }
`;
  async function cli(argv: string[]): Promise<string> {
    const cwd = mkdtempSync(path.join(tmpdir(), 'warden-couplings-'));
    writeFileSync(path.join(cwd, 'warden.config.yaml'), CONFIG);
    let stdout = '';
    const code = await main(['tools', ...argv], { cwd, env: {}, stdout: (t) => (stdout += t), stderr: () => {} });
    expect(code).toBe(0);
    return stdout;
  }

  it.each([
    ['edit under a global deny of write', ['--explain', 'edit'], 'edit', 'tools.deny', 'tools.allow', 'denied by tools.deny[0] = "write"; edit follows write'],
    ['apply_patch under a global deny of write', ['--model', 'openai/gpt-5', '--explain', 'apply_patch'], 'apply_patch', 'tools.deny', 'tools.allow', 'denied by tools.deny[0] = "write"; apply_patch follows write'],
    [
      'process under an agent byProvider deny of exec',
      ['--model', 'openai/gpt-5', '--explain', 'process'],
      'process',
      'agents.list[0].tools.byProvider.openai.deny',
      'agents.main.tools.byProvider.allow',
      'denied by agents.list[0].tools.byProvider.openai.deny[0] = "exec"; process follows exec',
    ],
    [
      'process in a channel that denies exec',
      ['--provider', 'discord', '--guild', '111', '--channel-name', 'general', '--explain', 'process'],
      'process',
      'channels.discord.guilds.111.channels.general.tools.deny',
      'group tools.allow',
      'denied by channels.discord.guilds.111.channels.general.tools.deny[0] = "exec"; process follows exec',
    ],
    [
      'pdf in a channel that denies read',
      ['--provider', 'discord', '--guild', '111', '--channel-name', 'general', '--explain', 'pdf'],
      'pdf',
      'channels.discord.guilds.111.channels.general.tools.deny',
      'group tools.allow',
      'denied by channels.discord.guilds.111.channels.general.tools.deny[1] = "read"; pdf follows read',
    ],
    [
      'process for a sender whose exec is denied',
      ['--sender', '7', '--explain', 'process'],
      'process',
      'tools.toolsBySender["id:7"].deny',
      'tools.toolsBySender',
      'denied by tools.toolsBySender["id:7"].deny[0] = "exec"; process follows exec',
    ],
  ])('%s', async (_name, argv, tool, by, step, rule) => {
    const json = JSON.parse(await cli([...argv, '--json'])) as { removed: { tool: string; by: string }[]; explain: { by: string; steps: ExplainStep[] } };
    expect(json.removed).toContainEqual({ tool, by });
    expect(json.explain.by).toBe(by);
    expect(json.explain.steps.find((s) => s.outcome === 'removed')).toMatchObject({ step, rule, by });
    const text = await cli(argv);
    expect(text).toContain(`${tool}: removed by ${by}\n`);
    expect(text).toMatch(new RegExp(`^ {2}${step.replace(/[.[\]"]/g, '\\$&')}\\s+removed\\s+${rule.replace(/[.[\]"]/g, '\\$&')}$`, 'm'));
    expect(text).toMatch(new RegExp(`^ {2}${tool}\\s+by ${by.replace(/[.[\]"]/g, '\\$&')}$`, 'm'));
  });

  it('/tools names the deny key for the coupled tools', () => {
    const result = surface({ tools: { deny: ['write'] }, channels: { web: { tools: { deny: ['exec', 'read'] } } } }, { provider: 'web' });
    const text = formatToolReport(result, false);
    expect(text).toContain('• edit — removed by tools.deny');
    expect(text).toContain('• apply_patch — removed by tools.deny');
    expect(text).toContain('• process — removed by channels.web.tools.deny');
    expect(text).toContain('• image — removed by channels.web.tools.deny');
    expect(text).toContain('• pdf — removed by channels.web.tools.deny');
    expect(text).not.toMatch(/removed by [^\n]*\.allow/);
  });
});
