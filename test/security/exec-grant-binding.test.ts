import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import type { ApprovalDecision, ApprovalRequest } from '../../src/approvals/types.js';
import { parseConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { ExecAllowlistStore } from '../../src/exec/allowlist-store.js';
import { checkExec } from '../../src/app/exec-check.js';
import { scriptOperands } from '../../src/exec/script-operands.js';
import { HookBus } from '../../src/hooks/bus.js';
import type { TurnContext } from '../../src/policy/context.js';
import { AuditLog } from '../../src/store/audit.js';
import { openWardenStore, WARDEN_MIGRATIONS } from '../../src/app/migrations.js';
import { migrationsFor, openStore, type Store } from '../../src/store/index.js';
import { Transcripts } from '../../src/store/transcript.js';
import { CORE_IMPLEMENTATIONS } from '../../src/app/core-tools.js';
import { ToolInvoker, type InvokeOutcome } from '../../src/tools/invoke/chain.js';

/**
 * Allow-always for a command that runs a script binds the script's content, not its path: the
 * agent approves `python3 job.py` once, rewrites job.py, and the next run asks again with a card
 * that says "changed since it was approved". Real files, real interpreters, the real store, and
 * the exec tool through the whole call chain.
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-grant-binding-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let workspace: string;
let store: Store;
let approvals: ApprovalService;
let invoker: ToolInvoker;
let requests: ApprovalRequest[];
let decisions: ApprovalDecision[];
let caseNo = 0;

const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'channel', channelId: 'dev', senderIsOwner: true, senderId: 'op', spawnDepth: 0 };
const parsed = parseConfig({ owners: { web: ['op'] }, tools: { profile: 'coding', exec: { host: 'gateway' } } });
if (!parsed.ok) throw parsed.error;
const config = parsed.value.config;

beforeEach(async () => {
  const dir = path.join(root, `case-${++caseNo}`);
  workspace = path.join(dir, 'workspace');
  mkdirSync(path.join(workspace, 'sub'), { recursive: true });
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  store = opened.store;
  const events = new EventBus();
  approvals = new ApprovalService({ store, config, events, pollMs: 20 });
  requests = [];
  decisions = [];
  events.on('approval.requested', ({ request }) => {
    requests.push(request);
    const decision = decisions.shift() ?? 'deny';
    setTimeout(() => void approvals.resolveAsOperator(request.id, decision, 'op'), 5);
  });
  const exec = CORE_IMPLEMENTATIONS.exec!;
  invoker = new ToolInvoker({
    resolveTool: (id) => (id === 'exec' ? exec.load({ config, baseDir: dir, store }) : undefined),
    hooks: new HookBus(),
    approvals,
    transcripts: new Transcripts(store.db),
    audit: new AuditLog(store.db),
    events,
  });
});
afterEach(async () => {
  approvals.shutdown();
  await store.close();
});

async function run(command: string, decision: ApprovalDecision = 'deny', workdir?: string): Promise<{ out: InvokeOutcome; text: string; asked: ApprovalRequest | undefined }> {
  const before = requests.length;
  decisions.push(decision);
  const out = await invoker.invoke({ tool: 'exec', args: { command, ...(workdir ? { workdir } : {}) }, turn, sessionKey: 'agent:main:web:channel:dev', workspaceDir: workspace, loopDetection: false });
  decisions.length = 0;
  const text = out.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  return { out, text, asked: requests.length > before ? requests[requests.length - 1] : undefined };
}

const write = (rel: string, content: string, mode = 0o644) => {
  const file = path.join(workspace, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  chmodSync(file, mode);
};

interface Form {
  form: string;
  command: string;
  /** Writes the script(s) printing `word`. */
  files: (word: string) => void;
  /** The agent's move after approval. */
  change: (word: string) => void;
}

const py = (word: string) => `print(${JSON.stringify(word)})\n`;
const shScript = (word: string) => `#!/bin/sh\necho ${word}\n`;
const rewrite = (rel: string, body: (w: string) => string, mode?: number) => (w: string) => write(rel, body(w), mode);

const FORMS: Form[] = [
  { form: 'python3 script', command: 'python3 job.py', files: rewrite('job.py', py), change: rewrite('job.py', py) },
  { form: 'python3 with options', command: 'python3 -u -W ignore job.py', files: rewrite('job.py', py), change: rewrite('job.py', py) },
  { form: 'python3 in a subdirectory', command: 'python3 sub/job.py', files: rewrite('sub/job.py', py), change: rewrite('sub/job.py', py) },
  { form: 'python3 after a wrapper', command: 'timeout 10 python3 job.py', files: rewrite('job.py', py), change: rewrite('job.py', py) },
  { form: 'node script', command: 'node x.js', files: rewrite('x.js', (w) => `console.log(${JSON.stringify(w)})\n`), change: rewrite('x.js', (w) => `console.log(${JSON.stringify(w)})\n`) },
  {
    form: 'node preload (-r)',
    command: 'node -r ./pre.js x.js',
    files: (w) => {
      write('pre.js', `console.log(${JSON.stringify(w)})\n`);
      write('x.js', '\n');
    },
    change: rewrite('pre.js', (w) => `console.log(${JSON.stringify(w)})\n`),
  },
  { form: 'perl script', command: 'perl x.pl', files: rewrite('x.pl', (w) => `print "${w}\\n";\n`), change: rewrite('x.pl', (w) => `print "${w}\\n";\n`) },
  { form: 'perl with -I', command: 'perl -I lib -w x.pl', files: rewrite('x.pl', (w) => `print "${w}\\n";\n`), change: rewrite('x.pl', (w) => `print "${w}\\n";\n`) },
  { form: 'sh script.sh', command: 'sh script.sh', files: rewrite('script.sh', shScript), change: rewrite('script.sh', shScript) },
  { form: 'bash script.sh', command: 'bash script.sh', files: rewrite('script.sh', shScript), change: rewrite('script.sh', shScript) },
  { form: 'dash script.sh', command: 'dash script.sh', files: rewrite('script.sh', shScript), change: rewrite('script.sh', shScript) },
  { form: './script.sh (the executable itself)', command: './script.sh', files: rewrite('script.sh', shScript, 0o755), change: rewrite('script.sh', shScript, 0o755) },
  { form: 'sub/tool (relative executable)', command: 'sub/tool', files: rewrite('sub/tool', shScript, 0o755), change: rewrite('sub/tool', shScript, 0o755) },
  { form: "bash -c './deploy.sh'", command: "bash -c './deploy.sh'", files: rewrite('deploy.sh', shScript, 0o755), change: rewrite('deploy.sh', shScript, 0o755) },
  { form: "sh -c 'python3 job.py'", command: "sh -c 'python3 job.py'", files: rewrite('job.py', py), change: rewrite('job.py', py) },
  { form: 'cd sub && python3 job.py', command: 'cd sub && python3 job.py', files: rewrite('sub/job.py', py), change: rewrite('sub/job.py', py) },
  { form: 'awk -f program', command: 'awk -f prog.awk data.txt', files: (w) => (write('prog.awk', `{ print "${w}" }\n`), write('data.txt', 'x\n')), change: rewrite('prog.awk', (w) => `{ print "${w}" }\n`) },
  {
    form: 'a symlinked script, its target rewritten',
    command: 'python3 link.py',
    files: (w) => {
      write('real.py', py(w));
      symlinkSync('real.py', path.join(workspace, 'link.py'));
    },
    change: rewrite('real.py', py),
  },
  {
    form: 'a symlinked script, the link swapped',
    command: 'python3 link.py',
    files: (w) => {
      write('real.py', py(w));
      symlinkSync('real.py', path.join(workspace, 'link.py'));
    },
    change: (w) => {
      write('other.py', py(w));
      unlinkSync(path.join(workspace, 'link.py'));
      symlinkSync('other.py', path.join(workspace, 'link.py'));
    },
  },
  {
    form: 'an executable symlink swapped',
    command: './run',
    files: (w) => {
      write('a.sh', shScript(w), 0o755);
      symlinkSync('a.sh', path.join(workspace, 'run'));
    },
    change: (w) => {
      write('b.sh', shScript(w), 0o755);
      unlinkSync(path.join(workspace, 'run'));
      symlinkSync('b.sh', path.join(workspace, 'run'));
    },
  },
];

describe('allow-always binds the script content, per interpreter and form', () => {
  it.each(FORMS)('$form: approved always, unchanged runs unasked; rewritten asks and says it changed', async ({ command, files, change }) => {
    files('v1');
    const first = await run(command, 'allow-always');
    expect(first.asked, 'the first run asks').toBeDefined();
    expect(first.asked!.allowedDecisions).toContain('allow-always');
    expect(first.text).toContain('v1');

    const again = await run(command);
    expect(again.asked, `unchanged, the grant covers it: ${again.text}`).toBeUndefined();
    expect(again.text).toContain('v1');

    change('v2');
    const changed = await run(command, 'deny');
    expect(changed.asked, 'a changed script asks again').toBeDefined();
    expect(changed.asked!.title).toBe('Run a command (changed since it was approved)');
    expect(changed.asked!.facts.find((f) => f.label === 'Changed')?.value).toMatch(/^changed since it was approved: /);
    expect(changed.text).not.toContain('v2');

    // Approved again, the new content is what the grant binds.
    expect((await run(command, 'allow-always')).text).toContain('v2');
    const after = await run(command);
    expect(after.asked).toBeUndefined();
    expect(after.text).toContain('v2');
  });

  it('a script that disappears, and one that appears where none was, both ask', async () => {
    write('job.py', py('v1'));
    await run('python3 job.py', 'allow-always');
    rmSync(path.join(workspace, 'job.py'));
    const gone = await run('python3 job.py');
    expect(gone.asked?.facts.find((f) => f.label === 'Changed')?.value).toMatch(/job\.py no longer exists/);

    await run('python3 later.py', 'allow-always');
    write('later.py', py('planted'));
    const planted = await run('python3 later.py');
    expect(planted.asked?.facts.find((f) => f.label === 'Changed')?.value).toMatch(/later\.py did not exist then/);
    expect(planted.text).not.toContain('planted');
  });

  it('a relative script binds the file in the directory it was approved in', async () => {
    write('job.py', py('root'));
    write('sub/job.py', py('root'));
    await run('python3 job.py', 'allow-always');
    const elsewhere = await run('python3 job.py', 'deny', 'sub');
    expect(elsewhere.asked, 'same argv, same content, other file: asks').toBeDefined();
  });

  it('a swapped link names its new target on the card', async () => {
    write('real.py', py('v1'));
    write('other.py', py('v1'));
    symlinkSync('real.py', path.join(workspace, 'link.py'));
    await run('python3 link.py', 'allow-always');
    unlinkSync(path.join(workspace, 'link.py'));
    symlinkSync('other.py', path.join(workspace, 'link.py'));
    const swapped = await run('python3 link.py');
    expect(swapped.asked?.facts.find((f) => f.label === 'Changed')?.value).toMatch(/link\.py now leads to .*other\.py, not .*real\.py/);
  });

  it('the card names what allow-always would bind, with the hash', async () => {
    write('job.py', py('v1'));
    const first = await run('python3 job.py', 'deny');
    expect(first.asked?.facts.find((f) => f.label === 'Allow always binds')?.value).toMatch(new RegExp(`${path.join(workspace, 'job.py')} \\(sha256 [0-9a-f]{12}…\\)`));
  });

  it('the stored grant keeps the hash', async () => {
    write('job.py', py('v1'));
    await run('python3 job.py', 'allow-always');
    const [grant] = await new ExecAllowlistStore(store.db).list('main');
    expect(grant!.boundFiles).toEqual([{ path: path.join(workspace, 'job.py'), realPath: path.join(workspace, 'job.py'), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
  });
});

describe('a login shell payload', () => {
  it("`bash -lc './deploy.sh'`: whatever allow-always would store binds deploy.sh", () => {
    const cwd = mkdtempSync(path.join(root, 'login-'));
    writeFileSync(path.join(cwd, 'deploy.sh'), shScript('v1'), { mode: 0o755 });
    const plan = checkExec(config, "bash -lc './deploy.sh'", turn, { cwd, home: root }).allowAlways;
    for (const entry of plan.entries) expect(entry.boundFiles?.map((f) => f.path)).toEqual([path.join(cwd, 'deploy.sh')]);
  });
});

describe('what cannot be bound is not offered', () => {
  it.each<[string, RegExp]>([
    ['python3 -m mymodule', /-m/],
    ['node -r dotenv/config app.js', /node_modules/],
    ['node --weird-flag app.js', /not known/],
    ['python3 --weird job.py', /not known/],
    ['make -f build.mk', /inline code|repository configuration/],
  ])('`%s`: allow-always is not offered (%s)', (command, why) => {
    const v = checkExec(config, command, turn, { cwd: root, home: root });
    expect(v.decision).toBe('ask');
    expect(v.allowAlways.offered).toBe(false);
    expect(v.allowAlways.why).toMatch(why);
  });
  it('a FIFO is never opened and never bound', () => {
    const dir = mkdtempSync(path.join(root, 'fifo-'));
    const fifo = path.join(dir, 'job.py');
    // Reading a FIFO would block: the binding must never open it.
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const v = checkExec(config, 'python3 job.py', turn, { cwd: dir, home: root });
    expect(v.allowAlways.offered).toBe(false);
    expect(v.allowAlways.why).toMatch(/not a regular file/);
  });
});

describe('grants from before content binding', () => {
  it('the migration adds the column; an old grant still covers a command without a script, and asks again for a script', async () => {
    const dir = path.join(root, 'legacy');
    const old = await openStore({ dataDir: dir, migrations: migrationsFor('sqlite', WARDEN_MIGRATIONS).filter((m) => m.id !== 'exec-002-bound-files' && m.id !== 'exec-003-executor') });
    if (!old.ok) throw new Error(old.error.message);
    const insert = "INSERT INTO exec_allowlist (id, agent_id, pattern, arg_pattern, source, created_at) VALUES (?, 'main', ?, ?, 'allow-always', 1)";
    await old.store.db.run(insert, ['old-rm', '/usr/bin/rm', '^-rf\x00build/\x00$']);
    await old.store.db.run(insert, ['old-py', '/usr/bin/python3.11', '^job\\.py\x00$']);
    await old.store.close();

    const migrated = await openWardenStore({ dataDir: dir });
    if (!migrated.ok) throw new Error(migrated.error.message);
    const stored = await new ExecAllowlistStore(migrated.store.db).list('main');
    await migrated.store.close();
    expect(stored.map((e) => e.boundFiles)).toEqual([undefined, undefined]);

    const cwd = mkdtempSync(path.join(root, 'legacy-ws-'));
    writeFileSync(path.join(cwd, 'job.py'), py('x'));
    expect(checkExec(config, 'rm -rf build/', turn, { cwd, home: root, storedAllowlist: stored }).decision).toBe('allow');
    const py3 = checkExec(config, 'python3 job.py', turn, { cwd, home: root, storedAllowlist: stored });
    expect(py3.decision).toBe('ask');
    expect(py3.reason).toMatch(/approved before Warden bound script content/);
  });
});

describe('exact-command grants (strictInlineEval off) bind the content too', () => {
  it('`python3 job.py` stored as one command text, then rewritten, asks', () => {
    const loose = parseConfig({ owners: { web: ['op'] }, tools: { exec: { strictInlineEval: false } } });
    if (!loose.ok) throw loose.error;
    const cwd = mkdtempSync(path.join(root, 'loose-'));
    writeFileSync(path.join(cwd, 'job.py'), py('v1'));
    const plan = checkExec(loose.value.config, 'python3 job.py', turn, { cwd, home: root }).allowAlways;
    expect(plan.entries[0]!.pattern).toMatch(/^=command:/);
    const stored = plan.entries.map((e) => ({ ...e, source: 'allow-always' as const }));
    expect(checkExec(loose.value.config, 'python3 job.py', turn, { cwd, home: root, storedAllowlist: stored }).decision).toBe('allow');
    writeFileSync(path.join(cwd, 'job.py'), py('v2'));
    const v = checkExec(loose.value.config, 'python3 job.py', turn, { cwd, home: root, storedAllowlist: stored });
    expect(v.decision).toBe('ask');
    expect(v.changedSinceApproval[0]).toMatch(/^changed since it was approved: .*job\.py/);
  });
});

describe('which operand is the script', () => {
  it.each<[string, ReturnType<typeof scriptOperands>]>([
    ['python3 job.py a b', { kind: 'files', files: ['job.py'] }],
    ['python3 -u -B job.py', { kind: 'files', files: ['job.py'] }],
    ['python3 -W ignore job.py', { kind: 'files', files: ['job.py'] }],
    ['python3 -Werror job.py', { kind: 'files', files: ['job.py'] }],
    ['python3 -X dev -X utf8 job.py', { kind: 'files', files: ['job.py'] }],
    ['python3.11 -- job.py', { kind: 'files', files: ['job.py'] }],
    ['python3 -c 1 job.py', { kind: 'none' }],
    ['python3 -', { kind: 'none' }],
    ['node x.js --flag', { kind: 'files', files: ['x.js'] }],
    ['node --inspect=0 --title t x.js', { kind: 'files', files: ['x.js'] }],
    ['node -r ./a.js --import=./b.mjs x.js', { kind: 'files', files: ['./a.js', './b.mjs', 'x.js'] }],
    ['node --env-file=.env x.js', { kind: 'files', files: ['.env', 'x.js'] }],
    ['node -e 1', { kind: 'none' }],
    ['perl -w -I lib x.pl arg', { kind: 'files', files: ['x.pl'] }],
    ['perl -Ilib -MData::Dumper x.pl', { kind: 'files', files: ['x.pl'] }],
    ['perl -i.bak x.pl file', { kind: 'files', files: ['x.pl'] }],
    ['perl -ne 1', { kind: 'none' }],
    ['ruby -w -I lib x.rb', { kind: 'files', files: ['x.rb'] }],
    ['php -f x.php', { kind: 'files', files: ['x.php'] }],
    ['lua -l mod x.lua', { kind: 'files', files: ['x.lua'] }],
    ['sh x.sh a', { kind: 'files', files: ['x.sh'] }],
    ['bash -e -o pipefail x.sh', { kind: 'files', files: ['x.sh'] }],
    ["bash -c 'x'", { kind: 'none' }],
    ['awk -F , -f p.awk d.csv', { kind: 'files', files: ['p.awk'] }],
    ['gawk -i inc.awk -f p.awk d', { kind: 'files', files: ['inc.awk', 'p.awk'] }],
    ['sed -f s.sed d', { kind: 'files', files: ['s.sed'] }],
    ["awk '{print}' d", { kind: 'none' }],
    ['java -Xmx1g -jar app.jar', { kind: 'files', files: ['app.jar'] }],
    ['java Main.java', { kind: 'files', files: ['Main.java'] }],
    ['deno run --allow-read x.ts', { kind: 'files', files: ['x.ts'] }],
    ['deno run --config=deno.json x.ts', { kind: 'files', files: ['deno.json', 'x.ts'] }],
    ['deno ./x.ts', { kind: 'files', files: ['./x.ts'] }],
    ['bun run x.ts', { kind: 'files', files: ['x.ts'] }],
    ['tsx --no-warnings x.ts', { kind: 'files', files: ['x.ts'] }],
    ['pwsh -NoProfile -File x.ps1', { kind: 'files', files: ['x.ps1'] }],
    ['julia x.jl', { kind: 'files', files: ['x.jl'] }],
    ['ls -la', { kind: 'none' }],
  ])('%s → %j', (command, expected) => {
    expect(scriptOperands(command.split(' ').map((w) => w.replace(/^'|'$/g, '')))).toEqual(expected);
  });
  it.each([
    'python3 -m x', 'python3 --foo job.py', 'node --foo x.js', 'node -r pkg x.js', 'ruby -C dir x.rb', 'php -d x=1 y.php', 'gawk -l ext -f p.awk',
    'java Main', 'java -cp . Main', 'java -javaagent:a.jar -jar b.jar', 'deno eval 1', 'deno run --weird x.ts', 'bun build', 'julia -e 1',
  ])('%s → unknown', (command) => {
    expect(scriptOperands(command.split(' ')).kind).toBe('unknown');
  });
});
