import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { argumentBinding } from '../../src/approvals/argument-files.js';
import { ApprovalService } from '../../src/approvals/service.js';
import type { ApprovalDecision, ApprovalRequest } from '../../src/approvals/types.js';
import { parseConfig } from '../../src/config/index.js';
import type { WardenConfig } from '../../src/config/schema/index.js';
import { EventBus } from '../../src/events/events.js';
import { ExecAllowlistStore } from '../../src/exec/allowlist-store.js';
import { checkExec } from '../../src/app/exec-check.js';
import { segmentScriptPaths, type BoundFile } from '../../src/exec/content-binding.js';
import { HookBus } from '../../src/hooks/bus.js';
import type { TurnContext } from '../../src/policy/context.js';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/index.js';
import { AuditLog } from '../../src/store/audit.js';
import { Transcripts } from '../../src/store/transcript.js';
import { createExecTool } from '../../src/tools/core/exec/exec.js';
import { eraseArgs } from '../../src/tools/types.js';
import { ToolInvoker } from '../../src/tools/invoke/chain.js';
import { canSandbox, isRoot } from './sandbox-harness.js';

/**
 * Content binding holds from the check to the run (issue 23, finding 8), attacker-written:
 *
 * - the race: a grant or a card is decided on a script's bytes; the agent rewrites the script
 *   (or a module it imports) after the check and before the interpreter opens it — here
 *   deterministically, through the exec tool's `afterVerify` point, by a real write to the real
 *   file — and the command must still run the bytes that were checked, with the real python3,
 *   node, sh, bash, perl and awk, on the gateway host and inside the real sandbox;
 * - imports: what a script loads from beside it is bound with it (a rewrite asks again, a module
 *   planted later asks again), and a script that may load what a scan cannot follow asks every
 *   time (allow-always is not offered);
 * - embedded paths: a file named inside a longer argument is bound.
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-content-binding-'));
chmodSync(root, 0o755);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'channel', channelId: 'dev', senderIsOwner: true, senderId: 'op', spawnDepth: 0 };
const configFor = (host: 'gateway' | 'sandbox'): WardenConfig => {
  const parsed = parseConfig({ owners: { web: ['op'] }, tools: { profile: 'coding', exec: { host } } });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
};

let workspace: string;
let store: Store;
let approvals: ApprovalService;
let requests: ApprovalRequest[];
let decisions: ApprovalDecision[];
let racer: ((bound: readonly BoundFile[]) => void) | undefined;
let caseNo = 0;
const invokers = new Map<string, ToolInvoker>();

beforeEach(async () => {
  const dir = path.join(root, `case-${++caseNo}`);
  workspace = path.join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  chmodSync(dir, 0o755);
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  store = opened.store;
  const events = new EventBus();
  approvals = new ApprovalService({ store, config: configFor('gateway'), events, pollMs: 20 });
  requests = [];
  decisions = [];
  racer = undefined;
  events.on('approval.requested', ({ request }) => {
    requests.push(request);
    const decision = decisions.shift() ?? 'deny';
    setTimeout(() => void approvals.resolveAsOperator(request.id, decision, 'op'), 5);
  });
  invokers.clear();
  for (const host of ['gateway', 'sandbox'] as const) {
    const config = configFor(host);
    const exec = eraseArgs(createExecTool({ config, allowlist: new ExecAllowlistStore(store.db), afterVerify: (bound) => racer?.(bound) }));
    invokers.set(
      host,
      new ToolInvoker({
        resolveTool: (id) => (id === 'exec' ? exec : undefined),
        hooks: new HookBus(),
        approvals,
        transcripts: new Transcripts(store.db),
        audit: new AuditLog(store.db),
        events,
      }),
    );
  }
});
afterEach(async () => {
  approvals.shutdown();
  await store.close();
});

async function run(command: string, decision: ApprovalDecision = 'deny', host: 'gateway' | 'sandbox' = 'gateway') {
  const before = requests.length;
  decisions.push(decision);
  const out = await invokers.get(host)!.invoke({ tool: 'exec', args: { command }, turn, sessionKey: 'agent:main:web:channel:dev', workspaceDir: workspace, loopDetection: false });
  decisions.length = 0;
  const text = out.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  return { text, asked: requests.length > before ? requests[requests.length - 1] : undefined };
}

const write = (rel: string, content: string, mode = 0o644) => {
  const file = path.join(workspace, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  chmodSync(file, mode);
};

interface Race {
  form: string;
  command: string;
  /** Writes the program(s); `word` is what the approved bytes print. */
  files: (word: string) => void;
  /** The file the racer rewrites, and its new content printing `word`. */
  target: string;
  rewrite: (word: string) => string;
}

const py = (w: string) => `print(${JSON.stringify(w)})\n`;
const js = (w: string) => `console.log(${JSON.stringify(w)})\n`;
const sh = (w: string) => `#!/bin/sh\necho ${w}\n`;

const RACES: Race[] = [
  { form: 'python3 job.py', command: 'python3 job.py', files: (w) => write('job.py', py(w)), target: 'job.py', rewrite: py },
  { form: 'node x.js', command: 'node x.js', files: (w) => write('x.js', js(w)), target: 'x.js', rewrite: js },
  { form: 'sh x.sh', command: 'sh x.sh', files: (w) => write('x.sh', sh(w)), target: 'x.sh', rewrite: sh },
  { form: 'bash x.sh', command: 'bash x.sh', files: (w) => write('x.sh', sh(w)), target: 'x.sh', rewrite: sh },
  { form: './x.sh (the executable)', command: './x.sh', files: (w) => write('x.sh', sh(w), 0o755), target: 'x.sh', rewrite: sh },
  { form: 'perl x.pl', command: 'perl x.pl', files: (w) => write('x.pl', `print "${w}\\n";\n`), target: 'x.pl', rewrite: (w) => `print "${w}\\n";\n` },
  { form: 'awk -f p.awk', command: 'awk -f p.awk d.txt', files: (w) => (write('p.awk', `{ print "${w}" }\n`), write('d.txt', 'x\n')), target: 'p.awk', rewrite: (w) => `{ print "${w}" }\n` },
  { form: 'node -r ./pre.js (a preload)', command: 'node -r ./pre.js x.js', files: (w) => (write('pre.js', js(w)), write('x.js', '\n')), target: 'pre.js', rewrite: js },
  { form: "sh -c 'python3 job.py' (in a payload)", command: "sh -c 'python3 job.py'", files: (w) => write('job.py', py(w)), target: 'job.py', rewrite: py },
  { form: 'cd sub && python3 job.py', command: 'cd sub && python3 job.py', files: (w) => write('sub/job.py', py(w)), target: 'sub/job.py', rewrite: py },
  {
    form: 'python3 main.py importing helper (the import rewritten)',
    command: 'python3 main.py',
    files: (w) => (write('main.py', 'import helper\nhelper.say()\n'), write('helper.py', `def say():\n    print(${JSON.stringify(w)})\n`)),
    target: 'helper.py',
    rewrite: (w) => `def say():\n    print(${JSON.stringify(w)})\n`,
  },
  {
    form: "node main.js requiring ./lib (the require rewritten)",
    command: 'node main.js',
    files: (w) => (write('main.js', "require('./lib')\n"), write('lib.js', js(w))),
    target: 'lib.js',
    rewrite: js,
  },
];

/** The racer: the agent's write lands after the check, before the interpreter opens the file. */
const raceTo = (race: Race) => () => {
  racer = () => write(race.target, race.rewrite('PWNED'), race.target.endsWith('x.sh') ? 0o755 : 0o644);
};

function hosts(): Array<'gateway' | 'sandbox'> {
  return canSandbox && isRoot ? ['gateway', 'sandbox'] : ['gateway'];
}

describe.each(hosts())('the checked bytes are the bytes that run (%s host)', (host) => {
  it.each(RACES)('$form: rewritten right after the check, an allow-always grant still runs what was approved', async (race) => {
    race.files('approved');
    const first = await run(race.command, 'allow-always', host);
    expect(first.asked, 'the first run asks').toBeDefined();
    expect(first.text).toContain('approved');

    raceTo(race)();
    const raced = await run(race.command, 'deny', host);
    expect(raced.asked, `the grant covers it: ${raced.text}`).toBeUndefined();
    expect(readFileSync(path.join(workspace, race.target), 'utf8'), 'the racer did rewrite the file').toContain('PWNED');
    expect(raced.text).toContain('approved');
    expect(raced.text).not.toContain('PWNED');

    // The next call reads the rewritten file: changed since approval, asks.
    racer = undefined;
    const next = await run(race.command, 'deny', host);
    expect(next.asked?.title).toBe('Run a command (changed since it was approved)');
    expect(next.text).not.toContain('PWNED');
  });

  it.each(RACES)('$form: rewritten right after the card was approved once, the approved bytes run', async (race) => {
    race.files('approved');
    raceTo(race)();
    const once = await run(race.command, 'allow-once', host);
    expect(once.asked).toBeDefined();
    expect(once.text).toContain('approved');
    expect(once.text).not.toContain('PWNED');
  });
});

describe('the verified copy keeps what the program finds beside itself', () => {
  it('python: sys.path[0] holds the bound modules, and a module planted after approval asks again', async () => {
    write('main.py', 'import sys, helper\nhelper.say()\n');
    write('helper.py', "def say():\n    print('helper-ok')\n");
    expect((await run('python3 main.py', 'allow-always')).text).toContain('helper-ok');
    const again = await run('python3 main.py');
    expect(again.asked).toBeUndefined();
    expect(again.text).toContain('helper-ok');
  });
  it('python: a module absent at approval and planted later makes the grant ask', async () => {
    write('main.py', 'try:\n    import extra\nexcept ImportError:\n    print("no-extra")\n');
    expect((await run('python3 main.py', 'allow-always')).text).toContain('no-extra');
    write('extra.py', 'print("PWNED")\n');
    const planted = await run('python3 main.py');
    expect(planted.asked, 'the planted module is a new file the grant did not bind').toBeDefined();
    expect(planted.text).not.toContain('PWNED');
  });
  it('python: a stale __pycache__ planted beside the module is never loaded from the copy', async () => {
    write('main.py', 'import helper\nhelper.say()\n');
    write('helper.py', "def say():\n    print('source-ok')\n");
    await run('python3 main.py', 'allow-always');
    // Poisoned bytecode with the source's mtime would be trusted by CPython in the workspace.
    mkdirSync(path.join(workspace, '__pycache__'), { recursive: true });
    const compiled = readdirSync(path.join(workspace, '__pycache__')).find((f) => f.startsWith('helper.'));
    if (compiled) writeFileSync(path.join(workspace, '__pycache__', compiled), 'garbage');
    const again = await run('python3 main.py');
    expect(again.asked).toBeUndefined();
    expect(again.text).toContain('source-ok');
  });
  it('node: package.json ("type": "module") is bound and served with the script', async () => {
    write('package.json', '{"type":"module"}\n');
    write('main.js', "import { w } from './lib.js';\nconsole.log(w);\n");
    write('lib.js', "export const w = 'esm-ok';\n");
    expect((await run('node main.js', 'allow-always')).text).toContain('esm-ok');
    const again = await run('node main.js');
    expect(again.asked).toBeUndefined();
    expect(again.text).toContain('esm-ok');
    write('package.json', '{"type":"commonjs"}\n');
    expect((await run('node main.js')).asked?.title).toBe('Run a command (changed since it was approved)');
  });
  it('an import rewritten between runs asks again, naming the module', async () => {
    write('main.py', 'import helper\n');
    write('helper.py', 'X = 1\n');
    await run('python3 main.py', 'allow-always');
    write('helper.py', 'X = 2\n');
    const changed = await run('python3 main.py');
    expect(changed.asked?.facts.find((f) => f.label === 'Changed')?.value).toMatch(/helper\.py/);
    // Rewritten to run other programs, it cannot be bound at all: asks, and says why.
    write('helper.py', 'import os\nos.system("id")\n');
    const opaque = await run('python3 main.py');
    expect(opaque.asked?.facts.find((f) => f.label === 'Allow-always grant')?.value).toMatch(/helper\.py may load or run files chosen at run time/);
  });
});

/** Scripts that may load what a scan cannot bind: allow-always is never offered, the reason says so. */
const UNBINDABLE: Array<[string, string, Record<string, string>, RegExp]> = [
  ['python importlib', 'python3 m.py', { 'm.py': 'import importlib\nimportlib.import_module("h")\n' }, /importlib/],
  ['python __import__', 'python3 m.py', { 'm.py': 'm = __import__("h")\n' }, /__import__/],
  ['python subprocess', 'python3 m.py', { 'm.py': 'import subprocess\nsubprocess.run(["sh", "x.sh"])\n' }, /subprocess/],
  ['python exec(open())', 'python3 m.py', { 'm.py': 'exec(open("h.py").read())\n' }, /exec/],
  ['python sys.path', 'python3 m.py', { 'm.py': 'import sys\nsys.path.insert(0, "lib")\nimport h\n' }, /sys\.path/],
  ['python os.system', 'python3 m.py', { 'm.py': 'import os\nos.system("./x.sh")\n' }, /os\.system/],
  ['python package directory', 'python3 m.py', { 'm.py': 'import pkg\n', 'pkg/__init__.py': '' }, /package directory pkg/],
  ['python compiled module', 'python3 m.py', { 'm.py': 'import fast\n', 'fast.cpython-311-x86_64-linux-gnu.so': '' }, /compiled module/],
  ['python relative import', 'python3 m.py', { 'm.py': 'from . import h\n' }, /relative import/],
  ['node node_modules package', 'node m.js', { 'm.js': "require('leftpad')\n" }, /node_modules/],
  ['node computed require', 'node m.js', { 'm.js': "const n = './h'; require(n)\n" }, /computed name/],
  ['node computed import()', 'node m.mjs', { 'm.mjs': "await import('./h' + '.js')\n" }, /computed name/],
  ['node child_process', 'node m.js', { 'm.js': "require('child_process').execSync('./x.sh')\n" }, /child_process/],
  ['node eval', 'node m.js', { 'm.js': "eval(require('fs').readFileSync('h.js', 'utf8'))\n" }, /eval/],
  ['node directory module', 'node m.js', { 'm.js': "require('./lib')\n", 'lib/index.js': '' }, /directory/],
  ['sh sources ./lib.sh', 'sh x.sh', { 'x.sh': '. ./lib.sh\necho hi\n' }, /`\.`/],
  ['bash source', 'bash x.sh', { 'x.sh': 'set -e\nsource lib.sh\n' }, /source/],
  ['bash sources beside $0', 'bash x.sh', { 'x.sh': '. "$(dirname "$0")/lib.sh"\n' }, /`\.`/],
  ['sh runs ./other.sh', 'sh x.sh', { 'x.sh': 'echo start\n./other.sh\n' }, /by path/],
  ['sh runs sh other.sh', 'sh x.sh', { 'x.sh': 'if true; then sh other.sh; fi\n' }, /read by path or from text/],
  ['sh runs python3 helper.py', 'sh x.sh', { 'x.sh': 'python3 helper.py\n' }, /python3 helper\.py/],
  ['sh runs an expansion', 'sh x.sh', { 'x.sh': 'CMD=./other.sh\n$CMD\n' }, /expansion/],
  ['sh eval', 'sh x.sh', { 'x.sh': 'eval "$(cat cmds)"\n' }, /eval/],
  ['sh exec ./other', 'sh x.sh', { 'x.sh': 'exec ./other.sh\n' }, /by path/],
  ['sh env VAR=1 ./other', 'sh x.sh', { 'x.sh': 'env A=1 ./other.sh\n' }, /by path/],
  ['a shebang script sourcing', './x.sh', { 'x.sh': '#!/bin/bash\nsource ./lib.sh\n' }, /source/],
  ['a python shebang importing a package', './tool', { tool: '#!/usr/bin/env python3\nimport pkg\n', 'pkg/__init__.py': '' }, /package directory/],
  ['perl -I lib with a module', 'perl -I lib x.pl', { 'x.pl': 'use Helper;\n' }, /-I/],
  ['perl require of a file', 'perl x.pl', { 'x.pl': 'require "./h.pl";\n' }, /require/],
  ['ruby require_relative', 'ruby x.rb', { 'x.rb': "require_relative 'h'\n" }, /require_relative/],
  ['php include', 'php x.php', { 'x.php': "<?php include 'h.php';\n" }, /include/],
  ['lua dofile', 'lua x.lua', { 'x.lua': "dofile('h.lua')\n" }, /dofile/],
  ['gawk @include', 'awk -f p.awk d', { 'p.awk': '@include "h.awk"\n' }, /@include/],
  ['an unfollowed language (tsx)', 'tsx x.ts', { 'x.ts': '' }, /does not follow/],
];

describe('a script that may load what the scan cannot bind asks every time', () => {
  it.each(UNBINDABLE)('%s: `%s` — allow-always not offered', (_name, command, files, why) => {
    const cwd = mkdtempSync(path.join(root, 'unbindable-'));
    for (const [rel, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(cwd, rel)), { recursive: true });
      writeFileSync(path.join(cwd, rel), content, { mode: rel === 'x.sh' || rel === 'tool' ? 0o755 : 0o644 });
    }
    // What the gate binds, for every interpreter (some are not installed here)…
    const argv = command.split(' ');
    const exe = argv[0]!.startsWith('./') ? { token: argv[0]!, pathQualified: true, resolvedPath: path.join(cwd, argv[0]!), realPath: path.join(cwd, argv[0]!) } : null;
    const bound = segmentScriptPaths({ argv, exe, cwd, home: root });
    expect(bound.ok, JSON.stringify(bound)).toBe(false);
    expect(!bound.ok && bound.why).toMatch(why);
    // …and, where the interpreter is installed, the whole gate: it asks, and never offers allow-always.
    const v = checkExec(configFor('gateway'), command, turn, { cwd, home: root });
    expect(v.decision).toBe('ask');
    expect(v.allowAlways.offered, JSON.stringify(v.allowAlways)).toBe(false);
    if (v.allowAlways.why !== 'an executable could not be resolved') expect(v.allowAlways.why).toMatch(why);
  });

  it.each<[string, Record<string, string>]>([
    ['sh x.sh', { 'x.sh': '#!/bin/sh\nset -e\necho "a; b"\nfor f in a b; do echo $f; done\ncase "$1" in\n  start|stop) echo s ;;\n  *) echo other ;;\nesac\n/usr/bin/env true\n' }],
    ['python3 m.py', { 'm.py': 'import os, json\nfrom pathlib import Path\nimport re\nprint(re.compile("x"))\n' }],
    ['node m.js', { 'm.js': "const fs = require('node:fs');\nimport('node:path');\nconsole.log(fs)\n" }],
  ])('a script that loads only system modules is bindable: `%s`', (command, files) => {
    const cwd = mkdtempSync(path.join(root, 'bindable-'));
    for (const [rel, content] of Object.entries(files)) writeFileSync(path.join(cwd, rel), content);
    const v = checkExec(configFor('gateway'), command, turn, { cwd, home: root });
    expect(v.allowAlways.offered, v.allowAlways.why).toBe(true);
  });
});

/** A path inside a longer argument word: each is bound (by content, or as absent). */
const EMBEDDED: Array<[string, string]> = [
  ['./tool --config=./cfg.sh', 'cfg.sh'],
  ['./tool -c./cfg.sh', 'cfg.sh'],
  ['./tool -fcfg.sh', 'cfg.sh'],
  ['./tool @./args.txt', 'args.txt'],
  ['./tool --opts=@args.txt', 'args.txt'],
  ['./tool --rcfile=sub/evil', 'sub/evil'],
  ['./tool FOO=./cfg.sh', 'cfg.sh'],
  ['./tool cfg.sh', 'cfg.sh'],
  ['python3 job.py --config=./cfg.sh', 'cfg.sh'],
  ['sort --files0-from=./list.txt', 'list.txt'],
  ['tar -T./list.txt -cf /dev/null', 'list.txt'],
];

describe('argument files inside longer words are bound', () => {
  it.each(EMBEDDED)('`%s` binds %s', (command, file) => {
    const cwd = mkdtempSync(path.join(root, 'embedded-'));
    mkdirSync(path.join(cwd, 'sub'));
    writeFileSync(path.join(cwd, 'tool'), '\x7fELF', { mode: 0o755 });
    writeFileSync(path.join(cwd, 'job.py'), 'print(1)\n');
    writeFileSync(path.join(cwd, file), 'content\n');
    const v = checkExec(configFor('gateway'), command, turn, { cwd, home: root });
    const bound = v.allowAlways.entries.flatMap((e) => e.boundFiles ?? []).map((f) => f.path);
    expect(bound, JSON.stringify(v.allowAlways)).toContain(path.join(cwd, file));
  });

  it('a rewritten embedded file asks again, with the real program', async () => {
    write('job.py', 'import json\nprint(json.load(open("cfg.json"))["w"])\n');
    write('cfg.json', '{"w": "cfg-v1"}');
    expect((await run('python3 job.py --config=./cfg.json', 'allow-always')).text).toContain('cfg-v1');
    expect((await run('python3 job.py --config=./cfg.json')).asked).toBeUndefined();
    write('cfg.json', '{"w": "cfg-v2"}');
    const changed = await run('python3 job.py --config=./cfg.json');
    expect(changed.asked?.facts.find((f) => f.label === 'Changed')?.value).toMatch(/cfg\.json/);
  });

  it.each([
    [{ args: ['--config=./cfg.sh'] }, 'cfg.sh'],
    [{ flags: '-c./cfg.sh' }, 'cfg.sh'],
    [{ file: '@args.txt' }, 'args.txt'],
    [{ cmd: 'make -f./Makefile' }, 'Makefile'],
  ])('a tool call %j binds %s', (params, file) => {
    const cwd = mkdtempSync(path.join(root, 'tool-'));
    writeFileSync(path.join(cwd, file), 'x\n');
    const binding = argumentBinding(params, cwd);
    expect(binding.ok && binding.files.map((f) => f.path)).toContain(path.join(cwd, file));
  });
});
