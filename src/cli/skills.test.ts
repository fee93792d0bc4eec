import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { BUNDLED_SKILLS_DIR } from '../skills/index.js';
import { tempDir, writeSkill } from '../skills/testing.js';

async function runCli(argv: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { cwd, env: { HOME: path.join(cwd, 'home'), PATH: '', ...env }, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

function project(config: string) {
  const cwd = tempDir('warden-cli-skills-');
  writeFileSync(path.join(cwd, 'warden.config.yaml'), config);
  return cwd;
}

const bundled = (name: string) => path.join(BUNDLED_SKILLS_DIR, name, 'SKILL.md');

describe('warden skills', () => {
  it('answers the JSON contract: eligible with root, ineligible with why, errors with file', async () => {
    const cwd = project('skills:\n  entries:\n    incident-triage: { enabled: false }\n');
    const ws = path.join(cwd, 'workspace', 'skills');
    const mine = writeSkill(ws, 'deploy', 'description: Deploy the service');
    const override = writeSkill(path.join(cwd, 'workspace', '.agents', 'skills'), 'code-review', 'description: Our own review checklist');
    const gated = writeSkill(ws, 'jira', 'description: Jira\nmetadata: {"openclaw":{"requires":{"env":["JIRA_TOKEN"]}}}');
    const broken = writeSkill(ws, 'broken', 'name: broken');

    const { code, stdout, stderr } = await runCli(['skills', '--json'], cwd);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      eligible: [
        { name: 'code-review', root: 'bundled', location: bundled('code-review'), agentWritable: false },
        { name: 'deploy', root: 'workspace', location: mine, agentWritable: true },
      ],
      ineligible: [
        // Unlike OpenClaw, a workspace skill never shadows a bundled one: the bundled one stays.
        {
          name: 'code-review',
          location: override,
          why: `refused: from a folder an agent can write, it would shadow the bundled skill "code-review" (${bundled('code-review')}), which is used instead`,
        },
        { name: 'incident-triage', location: bundled('incident-triage'), why: 'disabled by skills.entries.incident-triage.enabled: false' },
        { name: 'jira', location: gated, why: 'missing environment JIRA_TOKEN (set it, or skills.entries.jira.env)' },
        { name: 'release-notes', location: bundled('release-notes'), why: 'missing on PATH: git' },
      ],
      errors: [{ file: broken, error: 'description is required' }],
      commands: [
        { command: '/code_review', skill: 'code-review' },
        { command: '/deploy', skill: 'deploy' },
      ],
      warnings: [],
    });
  });

  it('lists the slash commands; a trusted skill named like a built-in gets a suffix and a warning, an agent-written one no command', async () => {
    const cwd = project('skills:\n  allowBundled: []\n  extraDirs: [./team-skills]\n');
    const ws = path.join(cwd, 'workspace', 'skills');
    writeSkill(path.join(cwd, 'team-skills'), 'status', 'description: Team status digest');
    writeSkill(ws, 'run', 'description: Run a command\ncommand-dispatch: tool\ncommand-tool: exec');
    writeSkill(ws, 'quiet', 'description: Not a command\nuser-invocable: false');
    const approve = writeSkill(ws, 'approve', 'description: Approves everything');
    const json = JSON.parse((await runCli(['skills', '--json'], cwd)).stdout) as { commands: unknown; warnings: unknown };
    writeSkill(path.join(cwd, 'team-skills'), 'ship', 'description: Ship it\ncommand-dispatch: tool\ncommand-tool: exec');
    expect(json.commands).toBeDefined();
    const again = JSON.parse((await runCli(['skills', '--json'], cwd)).stdout) as { commands: unknown; warnings: unknown };
    expect(again.commands).toEqual([
      { command: '/ship', skill: 'ship', tool: 'exec' },
      { command: '/status_2', skill: 'status' },
      // An agent-written skill does not choose a tool for a person's text: a model turn instead.
      { command: '/run', skill: 'run' },
    ]);
    expect(again.warnings).toEqual([
      "skill \"status\": /status is a built-in command, which wins; the skill's command is /status_2",
      `skill "approve" (${approve}) is in a folder an agent can write and is named like the built-in /approve: it gets no slash command`,
      `skill "run" (${path.join(ws, 'run', 'SKILL.md')}) is in a folder an agent can write: its command-dispatch to exec is not honoured; its command is a model turn with the file as untrusted data`,
    ]);
    const { stdout } = await runCli(['skills'], cwd);
    expect(stdout).toMatch(/Slash commands \(3\):\n {2}\/ship +ship {2}\(runs exec, no model\)\n {2}\/status_2 +status\n {2}\/run +run\n/);
    expect(stdout).toContain('⚠ skill "status": /status is a built-in command');
  });

  it('reads the workspace of the agent named by --agent, relative to the config file', async () => {
    const cwd = project('agents:\n  list:\n    - { id: main, default: true }\n    - { id: ops, workspace: ./ops-space }\nskills:\n  allowBundled: []\n');
    writeSkill(path.join(cwd, 'ops-space', 'skills'), 'pager', 'description: Page the on-call');
    writeSkill(path.join(cwd, 'workspace', 'skills'), 'chat', 'description: Main agent only');

    const ops = await runCli(['skills', '--agent', 'ops', '--json', '--config', path.join(cwd, 'warden.config.yaml')], tempDir());
    expect(ops.code).toBe(0);
    const answer = JSON.parse(ops.stdout) as { eligible: Array<{ name: string }>; ineligible: Array<{ name: string; why: string }> };
    expect(answer.eligible.map((s) => s.name)).toEqual(['pager']);
    expect(new Set(answer.ineligible.map((s) => s.why))).toEqual(new Set(['bundled skill not listed in skills.allowBundled']));

    const main = await runCli(['skills', '--json'], cwd);
    expect((JSON.parse(main.stdout) as { eligible: Array<{ name: string }> }).eligible.map((s) => s.name)).toEqual(['chat']);
  });

  it('lists skills.extraDirs and the managed root under the data dir', async () => {
    const cwd = project('dataDir: ./state\nskills:\n  extraDirs: [./team-skills]\n  allowBundled: []\n');
    const extra = writeSkill(path.join(cwd, 'team-skills'), 'standup', 'description: Run the standup');
    const managed = writeSkill(path.join(cwd, 'state', 'skills'), 'oncall', 'description: On-call handover');
    const { stdout } = await runCli(['skills', '--json'], cwd);
    expect((JSON.parse(stdout) as { eligible: unknown[] }).eligible).toEqual([
      { name: 'oncall', root: 'managed', location: managed, agentWritable: false },
      { name: 'standup', root: 'extra', location: extra, agentWritable: false },
    ]);
  });

  it('prints a readable report without --json', async () => {
    const cwd = project('skills:\n  allowBundled: [code-review]\n');
    writeSkill(path.join(cwd, 'workspace', 'skills'), 'quiet', 'description: q\ndisable-model-invocation: true');
    mkdirSync(path.join(cwd, 'workspace', 'skills', 'empty'));
    writeFileSync(path.join(cwd, 'workspace', 'skills', 'empty', 'SKILL.md'), '');
    const { code, stdout } = await runCli(['skills'], cwd);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Skills of agent main \(workspace .*workspace\)/);
    expect(stdout).toMatch(/Eligible \(2\):\n {2}code-review +bundled/);
    expect(stdout).toMatch(/quiet +workspace .*\(agent-writable: untrusted, not offered to the model\)/);
    expect(stdout).toMatch(/Not eligible \(2\):/);
    expect(stdout).toMatch(/Not loaded \(1\):\n.*empty.SKILL\.md\n {4}missing YAML frontmatter/);
    expect(stdout).toMatch(/Roots, lowest precedence first:\n {2}bundled/);
  });

  it.each([
    ['an unknown agent', ['skills', '--agent', 'nope'], 'agents:\n  list: [{ id: main }]\n', /unknown agent "nope"; known agents: main/],
    ['--agent without a value', ['skills', '--agent'], '', /--agent needs an agent id/],
    ['a bad config key', ['skills'], 'skills:\n  extraDir: [x]\n', /skills\.extraDir: unknown key \(did you mean "extraDirs"\?\)/],
    ['a bad limit', ['skills'], 'skills:\n  limits: { maxSkillsInPrompt: 0 }\n', /skills\.limits\.maxSkillsInPrompt/],
  ])('exits 2 on %s', async (_label, argv, config, message) => {
    const { code, stdout, stderr } = await runCli(argv, project(config));
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
  });
});
