import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import { parseConfig } from '../../src/config/index.js';
import { ExecAllowlistStore } from '../../src/exec/allowlist-store.js';
import { checkExec } from '../../src/app/exec-check.js';
import { buildChildEnv, checkEnvOverrides } from '../../src/exec/env.js';
import { discoverGitConfig } from '../../src/exec/git-discovery.js';
import { SANDBOX_HOME } from '../../src/exec/sandbox.js';
import { log } from '../../src/log/log.js';
import type { TurnContext } from '../../src/policy/context.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { createExecTool } from '../../src/tools/core/exec/exec.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';
import { arena, canSandbox, isRoot, LAUNCHES, type Arena } from './sandbox-harness.js';

/**
 * Warden runs as root; the agent's commands run in the sandbox as uid 65534, over a workspace
 * handed to that uid. The agent plants a repository driver (a filter, textconv or external
 * diff, an include, a worktree, a submodule, …) with its own sandboxed commands, then asks for
 * a git command. The real exec tool judges it, a real approval service shows the card, and the
 * real git runs in the real sandbox: a planted driver never runs on an approval of the command
 * alone. Either Warden lists it as the sandboxed git will read it and neutralises it, or the
 * listing cannot see it and the call asks, with the card saying the drivers are NOT
 * neutralised (and a command an entry would let run unasked asks instead).
 *
 * Each neutralised case first shows the attack is real: run with what the listing by root
 * found (nothing), the payload fires in the sandbox. Each blind case shows it too: a command
 * the approver reads in full, approved on the warning, fires.
 */
const identity = LAUNCHES[0]![1];
const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'channel', channelId: 'dev', senderIsOwner: false, spawnDepth: 0 };
const IDENT = '-c user.name=a -c user.email=a@example.com';

let a: Arena;
let store: Extract<Awaited<ReturnType<typeof openWardenStore>>, { ok: true }>['store'];
let markers: string;

/** The driver command: leaves a marker named after the case, then passes its input through. */
const payload = (id: string) => `touch ${markers}/${id}; cat`;
const fired = (id: string) => existsSync(path.join(markers, id));

/** A repository at cases/<id> made by the agent in the sandbox: one committed file with a driver named in .gitattributes. */
function repo(id: string, attrs = 'a.txt filter=evil diff=evil merge=evil'): string {
  return [
    `mkdir -p cases/${id} && cd cases/${id}`,
    'git init -q -b main',
    `printf 'one\\n' > a.txt && printf '${attrs}\\n' > .gitattributes`,
    `git add . && git ${IDENT} commit -qm init`,
  ].join(' && ');
}
/** Another size: git sees the change from the index's stat data alone, however the index was copied. */
const modify = "printf 'one\\ntwo\\n' > a.txt";
/** Same content, a later mtime: git must hash the file again, through the clean filter. */
const touchLater = "touch -d '2099-01-01' a.txt";
const cfgFile = (id: string, body: string) => `printf '%s\\n' '${body.replace(/'/g, `'\\''`)}' > ${id}.cfg`;
const filterCfg = (id: string) => `[filter "evil"]\n\tclean = ${payload(id)}`;

async function agent(script: string, fresh?: string): Promise<void> {
  const r = await a.run(fresh === undefined ? script : `rm -rf cases/${fresh} cases/${fresh}-* cases/${fresh}.cfg && ${script}`);
  if (r.exitCode !== 0) throw new Error(`setup failed (${r.exitCode}): ${r.output}`);
}

/** What the listing by root found: nothing. The command runs in the sandbox with that. */
async function runUnlisted(command: string, cwd: string, plain = false): Promise<void> {
  const env = buildChildEnv({ LANG: 'C.UTF-8' }, { home: SANDBOX_HOME, git: { workspace: a.workspace, discovered: [] } });
  if (plain) for (const key of Object.keys(env)) if (key.startsWith('GIT_')) delete env[key];
  await a.run(command, { cwd, env });
}

function configOf(exec: Record<string, unknown>, approvals: Record<string, unknown> = {}) {
  const parsed = parseConfig({ owners: { web: ['op'] }, agents: { defaults: { workspace: a.workspace } }, tools: { exec: { host: 'sandbox', ...exec } }, approvals });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

interface Called {
  result: ToolResult;
  text: string;
  /** The cards shown, facts as `label: value` lines. */
  cards: string[];
}

/** The exec tool as the agent calls it; the approver answers every card with `decision` (null: never, so it expires). */
async function call(command: string, workdir: string, exec: Record<string, unknown>, decision: 'allow-once' | 'deny' | null, approvalsConfig?: Record<string, unknown>): Promise<Called> {
  const config = configOf(exec, approvalsConfig);
  const approvals = new ApprovalService({ store, config, pollMs: 20 });
  const cards: string[] = [];
  approvals.registerRenderer({
    provider: 'web',
    show: async (request) => {
      cards.push(request.facts.map((f) => `${f.label}: ${f.value}`).join('\n'));
      if (decision !== null) setTimeout(() => void approvals.resolveAsOperator(request.id, decision, 'tester'), 5);
    },
    update: async () => {},
  });
  try {
    const tool = createExecTool({ config, allowlist: new ExecAllowlistStore(store.db), hasBwrap: true, identity, protect: [] });
    const ctx: ToolCallContext = {
      toolCallId: 'c1',
      signal: new AbortController().signal,
      turn,
      sessionKey: 'agent:main:web:channel:dev',
      workspaceDir: a.workspace,
      log,
      approvals: approvals.requester({ agentId: 'main', sessionKey: 'agent:main:web:channel:dev', provider: 'web', channelId: 'dev' }),
    };
    const result = (await tool.execute({ command, workdir }, ctx)) as ToolResult;
    return { result, text: result.content.map((c) => (c.type === 'text' ? c.text : '')).join(''), cards };
  } finally {
    approvals.shutdown();
  }
}

interface Neutralised {
  name: string;
  /** The agent's setup, run in the sandbox from the workspace. */
  setup: (id: string) => string;
  /** Where the command runs, relative to the workspace. */
  workdir?: (id: string) => string;
  command: string | ((id: string) => string);
  /** The baseline runs without any git hardening (the payload sits where only that reaches it). */
  plain?: boolean;
}

const NEUTRALISED: Neutralised[] = [
  { name: 'filter.<x>.clean on `git diff` (the reported case)', setup: (id) => `${repo(id)} && git config filter.evil.clean '${payload(id)}' && ${modify}`, command: 'git diff' },
  { name: 'filter.<x>.clean on `git status`', setup: (id) => `${repo(id)} && git config filter.evil.clean '${payload(id)}' && ${touchLater}`, command: 'git status' },
  { name: 'filter.<x>.clean on `git add`', setup: (id) => `${repo(id)} && git config filter.evil.clean '${payload(id)}' && ${modify}`, command: 'git add a.txt' },
  { name: 'filter.<x>.process on `git add`', setup: (id) => `${repo(id)} && git config filter.evil.process '${payload(id)}' && ${modify}`, command: 'git add a.txt' },
  { name: 'a subsection in capitals (filter.EVIL.clean)', setup: (id) => `${repo(id, 'a.txt filter=EVIL')} && git config filter.EVIL.clean '${payload(id)}' && ${modify}`, command: 'git diff' },
  { name: 'diff.external on `git diff`', setup: (id) => `${repo(id)} && git config diff.external '${payload(id)}' && ${modify}`, command: 'git diff' },
  { name: 'diff.<x>.textconv on `git diff`', setup: (id) => `${repo(id)} && git config diff.evil.textconv '${payload(id)}' && ${modify}`, command: 'git diff' },
  { name: 'diff.<x>.command on `git diff`', setup: (id) => `${repo(id)} && git config diff.evil.command '${payload(id)}' && ${modify}`, command: 'git diff' },
  {
    name: 'include.path to a file in .git',
    setup: (id) => `${repo(id)} && (cd .git && ${cfgFile('evil', filterCfg(id))}) && git config include.path evil.cfg && ${modify}`,
    command: 'git diff',
  },
  {
    name: 'includeIf "gitdir:" naming the path as the sandbox sees it',
    setup: (id) => `${repo(id)} && (cd .git && ${cfgFile('evil', filterCfg(id))}) && git config "includeIf.gitdir:$PWD/.path" evil.cfg && ${modify}`,
    command: 'git diff',
  },
  {
    name: 'a linked worktree: the filter in the main repository, the command in the worktree',
    setup: (id) => `${repo(id)} && git config filter.evil.clean '${payload(id)}' && git worktree add -q ../${id}-wt && cd ../${id}-wt && ${modify}`,
    workdir: (id) => `cases/${id}-wt`,
    command: 'git diff',
  },
  {
    name: '.git is a gitdir: file pointing into the workspace',
    setup: (id) => `${repo(id)} && git config filter.evil.clean '${payload(id)}' && mv .git ../${id}-gitdir && echo 'gitdir: ../${id}-gitdir' > .git && ${modify}`,
    command: 'git diff',
  },
  {
    name: 'core.worktree moves the work tree to another directory',
    setup: (id) =>
      `${repo(id)} && git config filter.evil.clean '${payload(id)}' && mkdir ../${id}-tree && cp a.txt .gitattributes ../${id}-tree/ && git config core.worktree "$PWD/../${id}-tree" && cd ../${id}-tree && ${modify}`,
    command: 'git diff',
  },
  {
    name: "a populated submodule's filter on `git status` in the superproject",
    setup: (id) =>
      [
        `${repo(`${id}-src`)}`,
        `cd ../.. && ${repo(id, '*.md diff')}`,
        `GIT_ALLOW_PROTOCOL=file git ${IDENT} -c protocol.file.allow=always submodule add -q "$PWD/../${id}-src" sub && git ${IDENT} commit -qm sub`,
        `git -C sub config filter.evil.clean '${payload(id)}' && cd sub && ${touchLater}`,
      ].join(' && '),
    command: 'git status',
  },
  {
    name: '~/.gitconfig written by the command itself (the sandbox HOME)',
    setup: (id) => `${repo(id)} && ${modify}`,
    command: (id) => `printf '[filter "evil"]\\n\\tclean = ${payload(id)}\\n' > ~/.gitconfig && git diff`,
    plain: true,
  },
  {
    name: '$XDG_CONFIG_HOME/git/config written by the command itself',
    setup: (id) => `${repo(id)} && ${modify}`,
    command: (id) => `mkdir -p ~/.config/git && printf '[filter "evil"]\\n\\tclean = ${payload(id)}\\n' > ~/.config/git/config && git diff`,
    plain: true,
  },
  { name: 'core.fsmonitor on `git status`', setup: (id) => `${repo(id)} && git config core.fsmonitor '${payload(id)}'`, command: 'git status', plain: true },
  {
    name: 'core.hooksPath: pre-commit on `git commit`',
    setup: (id) => `${repo(id)} && mkdir hk && printf '#!/bin/sh\\n${payload(id)}\\n' > hk/pre-commit && chmod +x hk/pre-commit && git config core.hooksPath hk`,
    command: `git ${IDENT} commit -q --allow-empty -m x`,
    plain: true,
  },
  { name: 'core.sshCommand on `git ls-remote`', setup: (id) => `${repo(id)} && git config core.sshCommand '${payload(id)}; false'`, command: 'git ls-remote ssh://127.0.0.1:1/x', plain: true },
  { name: 'core.pager on `git -p log`', setup: (id) => `${repo(id)} && git config core.pager '${payload(id)}'`, command: "script -qc 'git -p log' /dev/null", plain: true },
];


interface Blind {
  name: string;
  setup: (id: string) => string;
  /** A command an entry with trustRepoConfig lets run unasked: with the listing blind, it asks. */
  command: string;
  /** What the approver reads in full and approves on the warning: the driver then runs. */
  proof: (id: string) => string;
  /** The blind reason, as the card states it. */
  why: RegExp;
}

const BLIND: Blind[] = [
  {
    name: '.git is a gitdir: file pointing to /tmp, which the command fills',
    setup: (id) => `${repo(id)} && git config filter.evil.clean '${payload(id)}' && mv .git ../${id}-real && echo 'gitdir: /tmp/${id}.git' > .git && ${modify}`,
    command: 'git diff',
    proof: (id) => `cp -r ../${id}-real /tmp/${id}.git && git diff`,
    why: /does not open the repository/,
  },
  {
    name: '.git is a link to /tmp',
    setup: (id) => `${repo(id)} && git config filter.evil.clean '${payload(id)}' && mv .git ../${id}-real && ln -s /tmp/${id}.git .git && ${modify}`,
    command: 'git diff',
    proof: (id) => `cp -r ../${id}-real /tmp/${id}.git && git diff`,
    why: /does not open the repository/,
  },
  {
    name: 'include.path to /tmp',
    setup: (id) => `${repo(id)} && (cd .. && ${cfgFile(id, filterCfg(id))}) && git config include.path /tmp/${id}.cfg && ${modify}`,
    command: 'git diff',
    proof: (id) => `cp ../${id}.cfg /tmp/${id}.cfg && git diff`,
    why: /includes \/tmp\/.*(does not exist|outside the workspace)/,
  },
  {
    name: 'include.path to ~ (the per-command HOME)',
    setup: (id) => `${repo(id)} && (cd .. && ${cfgFile(id, filterCfg(id))}) && git config include.path '~/${id}.cfg' && ${modify}`,
    command: 'git diff',
    proof: (id) => `cp ../${id}.cfg ~/${id}.cfg && git diff`,
    why: /includes ~\/.* outside the workspace/,
  },
  {
    name: 'includeIf "onbranch:" that the command turns true',
    setup: (id) => `${repo(id)} && (cd .git && ${cfgFile('evil', filterCfg(id))}) && git config includeIf.onbranch:evil.path evil.cfg && ${modify}`,
    command: 'git checkout -q -b evil && git diff',
    proof: () => 'git checkout -q -b evil && git diff',
    why: /on a condition the command can change \(onbranch:evil\)/,
  },
  {
    name: 'includeIf "hasconfig:remote.*.url:" that the command turns true',
    setup: (id) => `${repo(id)} && (cd .git && ${cfgFile('evil', filterCfg(id))}) && git config 'includeIf.hasconfig:remote.*.url:https://evil.example/**.path' evil.cfg && ${modify}`,
    command: 'git remote add o https://evil.example/x && git diff',
    proof: () => 'git remote add o https://evil.example/x && git diff',
    why: /on a condition the command can change \(hasconfig:/,
  },
  {
    name: 'an include that does not exist yet',
    setup: (id) => `${repo(id)} && (cd .. && ${cfgFile(id, filterCfg(id))}) && git config include.path later.cfg && ${modify}`,
    command: 'git diff',
    proof: (id) => `cp ../${id}.cfg .git/later.cfg && git diff`,
    why: /later\.cfg, which does not exist yet/,
  },
  {
    name: '.git/config is a link to /tmp',
    setup: (id) => `${repo(id)} && git config filter.evil.clean '${payload(id)}' && mv .git/config ../${id}.cfg && ln -s /tmp/${id}.cfg .git/config && ${modify}`,
    command: 'git diff',
    proof: (id) => `cp ../${id}.cfg /tmp/${id}.cfg && git diff`,
    why: /config links outside the workspace/,
  },
  {
    name: 'a driver whose name is not valid UTF-8',
    setup: (id) => `${repo(id, `a.txt filter=ev\\377il`)} && printf '[filter "ev\\377il"]\\n\\tclean = ${payload(id)}\\n' >> .git/config && ${modify}`,
    command: 'git diff',
    proof: () => 'git diff',
    why: /not valid UTF-8/,
  },
];

describe.skipIf(!canSandbox || !isRoot)('repository drivers, Warden as root, the real git in the real sandbox', () => {
  beforeAll(async () => {
    a = await arena(identity);
    markers = path.join(a.workspace, '.markers');
    await agent(`mkdir -p .markers cases`);
    const opened = await openWardenStore({ dataDir: path.join(a.root, 'data') });
    if (!opened.ok) throw new Error(opened.error.message);
    store = opened.store;
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    a?.cleanup();
  });
  const clear = () => {
    for (const f of readdirSync(markers)) rmSync(path.join(markers, f));
  };

  it('the workspace belongs to the sandbox uid, and root\'s own git lists nothing in it (the finding)', async () => {
    await agent(`${repo('finding')} && git config filter.evil.clean '${payload('finding')}'`, 'finding');
    expect(statSync(path.join(a.workspace, 'cases', 'finding', '.git', 'config')).uid).toBe(identity.uid);
    const asRoot = spawnSync('git', ['config', '--list'], {
      cwd: path.join(a.workspace, 'cases', 'finding'),
      env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' },
      encoding: 'utf8',
    });
    expect(asRoot.stdout).not.toContain('filter.evil.clean');
    const listed = await discoverGitConfig(path.join(a.workspace, 'cases', 'finding'), { host: 'sandbox', workspace: a.workspace, home: SANDBOX_HOME, identity });
    expect(listed).toEqual({ neutralisations: [{ key: 'filter.evil.clean', value: '' }], blind: null });
  });

  describe('listed as the sandboxed git reads them, and neutralised: an approved command runs no payload', () => {
    it.each(NEUTRALISED)('$name', async (c) => {
      const id = c.name.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 50);
      const workdir = c.workdir?.(id) ?? `cases/${id}`;
      const command = typeof c.command === 'string' ? c.command : c.command(id);
      await agent(c.setup(id), id);
      clear();
      await runUnlisted(command, path.join(a.workspace, workdir), c.plain);
      expect(fired(id), 'the attack works in the sandbox on what the listing by root found').toBe(true);
      await agent(c.setup(id), id);
      clear();
      const r = await call(command, workdir, {}, 'allow-once');
      expect(r.cards, 'the command asks (git runs repository configuration)').toHaveLength(1);
      expect(r.cards[0]).not.toMatch(/Repository drivers/);
      expect(fired(id), `the payload ran on the approval: ${r.text}`).toBe(false);
    });

    it('a configuration file Warden itself wrote as root (another owner than the sandbox uid) is read too', async () => {
      const id = 'root-owned';
      await agent(`${repo(id)} && git config include.path evil.cfg && ${modify}`, id);
      writeFileSync(path.join(a.workspace, 'cases', id, '.git', 'evil.cfg'), `${filterCfg(id)}\n`);
      expect(statSync(path.join(a.workspace, 'cases', id, '.git', 'evil.cfg')).uid).toBe(0);
      clear();
      await runUnlisted('git diff', path.join(a.workspace, 'cases', id));
      expect(fired(id), 'the sandboxed git reads the root-owned file').toBe(true);
      clear();
      const r = await call('git diff', `cases/${id}`, {}, 'allow-once');
      expect(r.cards[0]).not.toMatch(/Repository drivers/);
      expect(fired(id)).toBe(false);
    });

    it('a driver planted after the card was shown but before the command starts is listed then', async () => {
      const id = 'while-waiting';
      await agent(`${repo(id)} && ${modify}`, id);
      clear();
      const config = configOf({});
      const approvals = new ApprovalService({ store, config, pollMs: 20 });
      approvals.registerRenderer({
        provider: 'web',
        show: async (request) => {
          // The agent's other session writes the driver while the card waits (the config is the sandbox uid's).
          appendFileSync(path.join(a.workspace, 'cases', id, '.git', 'config'), `[filter "evil"]\n\tclean = ${payload(id)}\n`);
          setTimeout(() => void approvals.resolveAsOperator(request.id, 'allow-once', 'tester'), 5);
        },
        update: async () => {},
      });
      try {
        const tool = createExecTool({ config, allowlist: new ExecAllowlistStore(store.db), hasBwrap: true, identity, protect: [] });
        await tool.execute({ command: 'git diff', workdir: `cases/${id}` }, {
          toolCallId: 'c2', signal: new AbortController().signal, turn, sessionKey: 'agent:main:web:channel:dev', workspaceDir: a.workspace, log,
          approvals: approvals.requester({ agentId: 'main', sessionKey: 'agent:main:web:channel:dev', provider: 'web', channelId: 'dev' }),
        });
      } finally {
        approvals.shutdown();
      }
      expect(fired(id)).toBe(false);
    });
  });

  describe('where the listing cannot see what git will read, the call asks and says so', () => {
    const trusted = { allowlist: [{ pattern: '/usr/bin/git', trustRepoConfig: true }] };
    it.each(BLIND)('$name', async (c) => {
      const id = c.name.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 50);
      const workdir = `cases/${id}`;
      await agent(c.setup(id), id);
      clear();
      // An entry that trusts the repository would let it run unasked: it asks instead.
      const asked = await call(c.command, workdir, trusted, 'deny');
      expect(asked.cards, asked.text).toHaveLength(1);
      expect(asked.cards[0]).toMatch(/Repository drivers: NOT neutralised/);
      expect(asked.cards[0]).toMatch(c.why);
      expect(asked.cards[0]).toMatch(/Allow always: not offered/);
      expect(fired(id)).toBe(false);
      // Where nobody can be asked, it is denied.
      const off = await call(c.command, workdir, { ...trusted, ask: 'off' }, 'deny');
      expect(off.cards).toHaveLength(0);
      expect(off.result.details).toMatchObject({ status: 'denied' });
      expect(off.text).toMatch(/cannot be neutralised/);
      expect(fired(id)).toBe(false);
      // The warning is real: a command approved on it runs the driver.
      await agent(c.setup(id), id);
      clear();
      const approved = await call(c.proof(id), workdir, {}, 'allow-once');
      expect(approved.cards[0]).toMatch(/Repository drivers: NOT neutralised/);
      expect(fired(id), `the blind case is a real attack: ${approved.text}`).toBe(true);
    });

    it('an unanswered card never runs it on the askFallback (even `full`)', async () => {
      const c = BLIND.find((b) => b.name === 'include.path to /tmp')!;
      const id = 'expired';
      await agent(c.setup(id), id);
      clear();
      // The only fallback that runs a command that missed: security full, asking always.
      const fallback = { security: 'full', ask: 'always', askFallback: 'full' };
      const expired = await call(c.proof(id), `cases/${id}`, fallback, null, { exec: { timeoutSec: 1 } });
      expect(expired.cards[0]).toMatch(/Repository drivers: NOT neutralised/);
      expect(expired.result.details).toMatchObject({ status: 'denied' });
      expect(expired.text).toMatch(/never runs on a fallback/);
      expect(fired(id)).toBe(false);
      // The same expiry in a repository the listing sees runs on the fallback, neutralised.
      await agent(`${repo(id)} && git config filter.evil.clean '${payload(id)}' && ${modify}`, id);
      clear();
      const seen = await call('git diff', `cases/${id}`, fallback, null, { exec: { timeoutSec: 1 } });
      expect(seen.text).toContain('+two');
      expect(fired(id)).toBe(false);
    });

    it('a listing that times out is blind', async () => {
      await agent(repo('slow'), 'slow');
      const listed = await discoverGitConfig(path.join(a.workspace, 'cases', 'slow'), { host: 'sandbox', workspace: a.workspace, home: SANDBOX_HOME, identity, timeoutMs: 1 });
      expect(listed.blind).toMatch(/timed out|could not be listed/);
    });

    it('a .git that git does not take for a repository is blind; no .git at all starts no listing', async () => {
      await agent('mkdir -p cases/empty-git/.git cases/no-repo');
      const at = (dir: string) => discoverGitConfig(path.join(a.workspace, 'cases', dir), { host: 'sandbox', workspace: a.workspace, home: SANDBOX_HOME, identity });
      expect((await at('empty-git')).blind).toMatch(/does not open the repository/);
      expect(await at('no-repo')).toEqual({ neutralisations: [], blind: null });
    });

    it('commands that never run a driver (the default read-only list) still run unasked in a blind repository', async () => {
      const id = 'blind-readonly';
      await agent(`${repo(id)} && git config include.path /tmp/x.cfg`, id);
      const r = await call('git log --oneline', `cases/${id}`, {}, 'deny');
      expect(r.cards).toHaveLength(0);
      expect(r.text).toMatch(/init/);
    });

    it('a card that did not warn runs nothing once the listing turned blind while it waited', async () => {
      const id = 'turned-blind';
      await agent(`${repo(id)} && (cd .. && ${cfgFile(id, filterCfg(id))}) && ${modify}`, id);
      clear();
      const config = configOf({});
      const approvals = new ApprovalService({ store, config, pollMs: 20 });
      const cards: string[] = [];
      approvals.registerRenderer({
        provider: 'web',
        show: async (request) => {
          cards.push(request.facts.map((f) => `${f.label}: ${f.value}`).join('\n'));
          appendFileSync(path.join(a.workspace, 'cases', id, '.git', 'config'), '[include]\n\tpath = ~/x.cfg\n');
          setTimeout(() => void approvals.resolveAsOperator(request.id, 'allow-once', 'tester'), 5);
        },
        update: async () => {},
      });
      let result: ToolResult;
      try {
        const tool = createExecTool({ config, allowlist: new ExecAllowlistStore(store.db), hasBwrap: true, identity, protect: [] });
        result = (await tool.execute({ command: `cp ../${id}.cfg ~/x.cfg && git diff`, workdir: `cases/${id}` }, {
          toolCallId: 'c3', signal: new AbortController().signal, turn, sessionKey: 'agent:main:web:channel:dev', workspaceDir: a.workspace, log,
          approvals: approvals.requester({ agentId: 'main', sessionKey: 'agent:main:web:channel:dev', provider: 'web', channelId: 'dev' }),
        })) as ToolResult;
      } finally {
        approvals.shutdown();
      }
      expect(cards[0]).not.toMatch(/Repository drivers/);
      expect(result.details).toMatchObject({ status: 'denied' });
      expect(result.content[0]).toMatchObject({ text: expect.stringMatching(/since its approval card was shown/) });
      expect(fired(id)).toBe(false);
    });
  });
});

/**
 * The listing covers the repository of the working directory (and its submodules). A command
 * that points git at another one — by variable, option, `cd`, or a repository it makes itself
 * from a template — is judged by the gate before any listing: it asks even under an entry that
 * trusts the repository, and the model cannot set git's variables at all.
 */
describe('a command that points git elsewhere asks before any listing', () => {
  const config = (() => {
    const parsed = parseConfig({ owners: { web: ['op'] }, tools: { exec: { host: 'sandbox', allowlist: [{ pattern: '/usr/bin/git', trustRepoConfig: true }] } } });
    if (!parsed.ok) throw parsed.error;
    return parsed.value.config;
  })();
  it.each([
    'GIT_DIR=/tmp/x.git git diff', 'GIT_WORK_TREE=/tmp git diff', 'GIT_CONFIG_GLOBAL=./evil.cfg git diff', 'GIT_CONFIG_COUNT=0 git diff',
    'env GIT_CONFIG_GLOBAL=./evil.cfg git diff', 'HOME=. git diff', 'XDG_CONFIG_HOME=. git diff', 'export GIT_DIR=/tmp/x.git; git diff',
    'git --git-dir=/tmp/x.git diff', 'git --work-tree=/tmp diff', 'git -C sub diff', 'cd sub && git diff', 'git -c filter.evil.clean=sh diff',
    'git init -q --template=./tpl && git diff', 'git clone -q --template=./tpl ./a b', 'git config filter.evil.clean sh && git diff',
  ])('`%s` asks', (command) => {
    expect(checkExec(config, command, turn, { cwd: '/tmp', home: SANDBOX_HOME }).decision).toBe('ask');
  });
  it.each(['GIT_DIR', 'GIT_WORK_TREE', 'GIT_COMMON_DIR', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_PARAMETERS', 'GIT_CEILING_DIRECTORIES', 'HOME', 'XDG_CONFIG_HOME'])(
    'the model cannot set %s',
    (key) => {
      expect(checkEnvOverrides({ [key]: 'x' }).ok).toBe(false);
    },
  );
});
