// Attack class: a security rule that disappears because the plugin holding it does not load. An
// attacker (or an accident) breaks a policy plugin — a syntax error, a missing or moved entry, a
// register() that throws, a module format node refuses, a hook that is misspelt or refused, an
// entry that leaves the plugin folder, a plugin path that points nowhere — and Warden used to log
// one line and run on without the rule. Now each of these stops the start (and every command that
// decides, and `warden audit` is critical), or, where the operator chose
// `onLoadFailure: remove-guarded-tools`, the guarded tools are withheld. A plugin that declares it
// enforces nothing (`contracts.hooks` without a policy hook) is still reported and skipped.
// The built CLI as a process: test/e2e/policy-plugin.e2e.test.ts.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { auditPlugins } from '../../src/plugins/audit.js';
import { adoptPluginRuntime, createPluginRuntime, pluginReloadProblems } from '../../src/plugins/runtime.js';
import { resolveToolSurface } from '../../src/policy/surface.js';
import { config, turn } from '../../src/policy/testing.js';
import { surfaceInputs } from '../../src/app/surface-inputs.js';

/** A plugin `guard` in a fresh folder: its manifest, its files, and the config's entry for it. */
interface Case {
  name: string;
  manifest?: Record<string, unknown> | string;
  files: Record<string, string>;
  entry?: Record<string, unknown>;
  /** Extra `plugins` keys (paths, load). */
  plugins?: Record<string, unknown>;
  /** What the runtime makes of it. */
  expect: 'loaded' | 'stop' | 'skip' | { withhold: string[] };
  /** The reason named in the refusal. */
  why?: RegExp;
  /** The failure is visible without running code, so a reload to this config is refused too. */
  onDisk?: boolean;
  /** Set up anything else in the plugin folder. */
  setup?: (dir: string, root: string) => void;
  /**
   * How node itself treats the module format decides it; the test runner's own module loader
   * (which the in-process pass imports through) is more lenient, so only the process pass runs it.
   */
  nodeOnly?: boolean;
  /** The wait for register() in the in-process pass; the process pass skips it (the CLI waits the full 30 s). */
  hangs?: boolean;
}

const GUARD_TS = `import type { WardenPluginApi } from 'warden/plugin';
enum Verdict { Block = 'block' }
const reason: string = 'guard says no';
export function register(api: WardenPluginApi): void {
  api.on('before_tool_call', (e) => (String(e.params.command).includes('prod') ? { block: Verdict.Block === 'block', blockReason: reason } : undefined), { toolMatcher: ['exec'] });
}
`;
const POLICY = { contracts: { hooks: ['before_tool_call'], guardedTools: ['exec', 'process'] } };
const GOOD_MJS = 'export function register(api) { api.on("before_tool_call", () => undefined, { toolMatcher: ["exec"] }); }';

const CASES: Case[] = [
  // Loads: TypeScript in every module flavour, through the same loader the built CLI uses.
  { name: 'a .ts entry (enum, type annotations, a type-only import)', manifest: POLICY, files: { 'index.ts': GUARD_TS }, expect: 'loaded' },
  { name: 'an .mts entry', manifest: POLICY, files: { 'package.json': '{"warden":{"extensions":["./main.mts"]}}', 'main.mts': GUARD_TS }, expect: 'loaded' },
  {
    name: 'a .cts entry (CommonJS written in TypeScript)',
    manifest: POLICY,
    files: { 'package.json': '{"warden":{"extensions":["./main.cts"]}}', 'main.cts': 'const m: string[] = ["exec"];\nexports.register = (api: any): void => { api.on("before_tool_call", () => undefined, { toolMatcher: m }); };\n' },
    expect: 'loaded',
  },
  { name: 'a .ts entry importing a sibling .ts by its .js name', manifest: POLICY, files: { 'index.ts': 'import { matcher } from "./rules.js";\nexport const register = (api: any): void => { api.on("before_tool_call", () => undefined, { toolMatcher: matcher }); };\n', 'rules.ts': 'export const matcher: string[] = ["exec"];\n' }, expect: 'loaded' },
  // The entry cannot be read or run.
  { name: 'a syntax error', manifest: POLICY, files: { 'index.mjs': 'export function register(api) { api.on("before_tool_call", () => { ; }' }, expect: 'stop', why: /failed to load/ },
  { name: 'a TypeScript syntax error', manifest: POLICY, files: { 'index.ts': 'export function register(api: ) {' }, expect: 'stop', why: /failed to load/ },
  { name: 'no entry module at all', manifest: POLICY, files: {}, expect: 'stop', why: /no entry module/, onDisk: true },
  { name: 'package.json names an entry that is not there', manifest: POLICY, files: { 'package.json': '{"warden":{"extensions":["./dist/index.js"]}}' }, expect: 'stop', why: /does not exist/, onDisk: true },
  { name: 'register() throws', manifest: POLICY, files: { 'index.mjs': 'export function register() { throw new Error("no rules today"); }' }, expect: 'stop', why: /register\(api\) threw: no rules today/ },
  { name: 'register() rejects (async)', manifest: POLICY, files: { 'index.mjs': 'export async function register() { await null; throw new Error("later"); }' }, expect: 'stop', why: /threw: later/ },
  { name: 'the module throws while it loads', manifest: POLICY, files: { 'index.mjs': 'throw new Error("top level");' }, expect: 'stop', why: /top level/ },
  { name: 'no register export', manifest: POLICY, files: { 'index.mjs': 'export const registr = () => {};' }, expect: 'stop', why: /exports no register/ },
  { name: 'ESM syntax in a .cjs entry', manifest: POLICY, files: { 'index.cjs': GOOD_MJS }, expect: 'stop', why: /failed to load/, nodeOnly: true },
  { name: 'CommonJS in an ESM package (.js, type: module)', manifest: POLICY, files: { 'package.json': '{"type":"module"}', 'index.js': 'module.exports.register = () => {};' }, expect: 'stop', why: /module is not defined/, nodeOnly: true },
  { name: 'register() never returns', manifest: POLICY, files: { 'index.mjs': 'export function register() { return new Promise(() => {}); }' }, expect: 'stop', why: /did not finish registering/, hangs: true },
  // The entry runs, but a rule does not take.
  { name: 'declares before_tool_call but registers nothing', manifest: POLICY, files: { 'index.mjs': 'export function register() {}' }, expect: 'stop', why: /declares before_tool_call but register\(api\) did not register it/ },
  { name: 'declares before_tool_call, registers a misspelt hook', manifest: POLICY, files: { 'index.mjs': 'export function register(api) { api.on("before_tool_cal", () => ({ block: true })); }' }, expect: 'stop', why: /did not register it/ },
  { name: 'a tool matcher the bus refuses (wildcard)', manifest: POLICY, files: { 'index.mjs': 'export function register(api) { api.on("before_tool_call", () => ({ block: true }), { toolMatcher: ["*"] }); }' }, expect: 'stop', why: /policy hook's registration was refused/ },
  { name: 'a tool hook reaching past contracts.guardedTools', manifest: POLICY, files: { 'index.mjs': 'export function register(api) { api.on("before_tool_call", () => ({ block: true }), { toolMatcher: ["exec", "read"] }); }' }, expect: 'stop', why: /outside contracts.guardedTools: read/ },
  { name: 'says it has no policy hook, registers before_tool_call', manifest: { contracts: { hooks: [] } }, files: { 'index.mjs': GOOD_MJS }, expect: 'stop', why: /must declare contracts.hooks for: before_tool_call/ },
  { name: 'declares a trusted tool policy it cannot register (not explicitly enabled)', manifest: { contracts: { hooks: [], trustedToolPolicies: ['p1'] } }, files: { 'index.mjs': 'export function register(api) { api.registerTrustedToolPolicy({ id: "p1", description: "d", evaluate: () => undefined }); }' }, expect: 'stop', why: /trusted tool policy p1/ },
  { name: 'declares message_sending, which removing tools cannot stand in for', manifest: { contracts: { hooks: ['message_sending'] } }, files: { 'index.mjs': 'throw new Error("x")' }, entry: { onLoadFailure: 'remove-guarded-tools' }, expect: 'stop', why: /guards messages/ },
  // The declaration itself, and where the code is.
  { name: 'contracts.hooks names a hook Warden does not have', manifest: { contracts: { hooks: ['before_tool'] } }, files: { 'index.mjs': GOOD_MJS }, expect: 'stop', why: /names no hook Warden has: before_tool/, onDisk: true },
  { name: 'contracts.hooks is not a list', manifest: { contracts: { hooks: 'before_tool_call' } }, files: { 'index.mjs': GOOD_MJS }, expect: 'stop', why: /must be a list of hook names/, onDisk: true },
  {
    name: 'the entry is a link to code outside the plugin folder',
    manifest: POLICY,
    files: {},
    setup: (dir, root) => {
      writeFileSync(path.join(root, 'elsewhere.mjs'), GOOD_MJS);
      symlinkSync(path.join(root, 'elsewhere.mjs'), path.join(dir, 'index.mjs'));
    },
    expect: 'stop',
    why: /outside the plugin folder/,
    onDisk: true,
  },
  { name: 'the manifest does not parse', manifest: '{ id: "guard", contracts: ', files: { 'index.mjs': GOOD_MJS }, expect: 'stop', why: /malformed/, onDisk: true },
  { name: 'plugins.paths points nowhere (the entry configures rules for nothing)', manifest: POLICY, files: { 'index.mjs': GOOD_MJS }, plugins: { paths: ['no-such-folder'] }, expect: 'stop', why: /no-such-folder is not a directory/, onDisk: true },
  { name: 'plugins.load names a package that is not installed', manifest: POLICY, files: { 'index.mjs': GOOD_MJS }, plugins: { load: ['warden-guard-missing@1.0.0'] }, expect: 'stop', why: /warden-guard-missing is not installed/, onDisk: true },
  { name: 'an undeclared plugin (no contracts.hooks) that throws: it may have been a rule', manifest: {}, files: { 'index.mjs': 'throw new Error("x")' }, expect: 'stop', why: /does not declare contracts.hooks/ },
  { name: 'an undeclared plugin cannot opt into remove-guarded-tools', manifest: {}, files: { 'index.mjs': 'throw new Error("x")' }, entry: { onLoadFailure: 'remove-guarded-tools' }, expect: 'stop', why: /needs the manifest to declare contracts.hooks/ },
  // What the operator chose instead of stopping, and what enforces nothing.
  { name: 'remove-guarded-tools: its guarded tools are withheld', manifest: POLICY, files: { 'index.mjs': 'throw new Error("x")' }, entry: { onLoadFailure: 'remove-guarded-tools' }, expect: { withhold: ['exec', 'process'] } },
  { name: 'remove-guarded-tools without guardedTools: every tool is withheld', manifest: { contracts: { hooks: ['before_tool_call'] } }, files: { 'index.mjs': 'throw new Error("x")' }, entry: { onLoadFailure: 'remove-guarded-tools' }, expect: { withhold: ['*'] } },
  { name: 'a plugin that declares no policy hook is skipped', manifest: { contracts: { hooks: ['session_start'] } }, files: { 'index.mjs': 'throw new Error("x")' }, expect: 'skip' },
];

const BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));

function setUp(c: Case) {
  const root = mkdtempSync(path.join(tmpdir(), 'warden-policy-plugin-'));
  const dir = path.join(root, 'plugins', 'guard');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'warden.plugin.json'), typeof c.manifest === 'string' ? c.manifest : JSON.stringify({ id: 'guard', ...c.manifest }));
  for (const [name, text] of Object.entries(c.files)) writeFileSync(path.join(dir, name), text);
  c.setup?.(dir, root);
  const plugins = { paths: ['plugins'], entries: { guard: { ...c.entry } }, ...c.plugins };
  const cfg = config({ plugins, tools: { profile: 'coding' } });
  writeFileSync(path.join(root, 'warden.config.json'), JSON.stringify({ plugins, tools: { profile: 'coding' } }));
  return { root, cfg };
}

const LOAD_MS = 10_000;

describe('the built CLI: a policy plugin that does not load refuses the command, or its tools are withheld', () => {
  it.each(CASES.filter((c) => !c.hangs).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const { root } = setUp(c);
    const r = await execa('node', [BIN, 'tools', '--json', '--config', 'warden.config.json', '--sender', 'owner'], { cwd: root, reject: false, env: { WARDEN_LOG_LEVEL: 'silent' } });
    if (c.expect === 'stop') {
      expect(r.exitCode, r.stdout).toBe(2);
      expect(r.stderr).toMatch(/^warden tools: plugin/m);
      expect(r.stderr).toMatch(c.why!);
      expect(r.stdout).toBe('');
      return;
    }
    expect(r.exitCode, r.stderr).toBe(0);
    const answer = JSON.parse(r.stdout) as { tools: string[]; unavailable: Array<{ tool: string; why: string }> };
    if (typeof c.expect === 'object') {
      const withheld = c.expect.withhold[0] === '*' ? ['read', 'exec', 'write'] : c.expect.withhold;
      for (const tool of withheld) {
        expect(answer.tools).not.toContain(tool);
        expect(answer.unavailable).toContainEqual({ tool, why: expect.stringContaining('plugin guard, whose rules guard it, did not load') });
      }
      if (c.expect.withhold[0] !== '*') expect(answer.tools).toContain('read');
      else expect(answer.tools).toEqual([]);
    } else expect(answer.tools).toContain('exec');
  }, 30_000);
});

describe('in process: the runtime, the audit and the reload check agree', () => {
  it.each(CASES.filter((c) => !c.nodeOnly).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const { root, cfg } = setUp(c);
    const runtime = createPluginRuntime(cfg, root);
    await runtime.load(c.hangs ? 1_500 : LOAD_MS);
    const findings = await auditPlugins(runtime, { uid: 0, probeHooks: false });
    const critical = findings.filter((f) => f.severity === 'critical').map((f) => f.message);
    if (c.expect === 'loaded') {
      expect(runtime.plugins[0]).toMatchObject({ status: 'loaded', hooks: [expect.objectContaining({ name: 'before_tool_call' })] });
      expect(runtime.refusal()).toBeUndefined();
      expect(critical).toEqual([]);
      return;
    }
    if (c.expect === 'skip') {
      expect(runtime.plugins[0]!.status).toBe('error');
      expect(runtime.refusal()).toBeUndefined();
      expect(findings.map((f) => `${f.severity}:${f.id}`)).toContain('warn:plugins.not-loaded');
      return;
    }
    if (c.expect === 'stop') {
      expect(runtime.refusal()).toMatch(c.why!);
      expect(critical.join('\n')).toMatch(c.why!);
      // Reloads run no plugin code: a failure that shows on disk refuses a reload to this config too.
      if (c.onDisk) expect(pluginReloadProblems(cfg, root).map((p) => p.message).join('\n')).toMatch(c.why!);
      return;
    }
    // Withheld: Warden runs, and no context offers the guarded tools (every tool, for '*').
    expect(runtime.refusal()).toBeUndefined();
    expect(findings.map((f) => `${f.severity}:${f.id}`)).toContain('warn:plugins.policy-withheld');
    const surface = resolveToolSurface(cfg, turn({ senderIsOwner: true }), surfaceInputsFor(cfg, root, runtime));
    if (c.expect.withhold[0] === '*') expect(surface.tools).toEqual([]);
    else {
      for (const tool of c.expect.withhold) {
        expect(surface.tools).not.toContain(tool);
        expect(surface.unavailable).toContainEqual({ tool, why: expect.stringContaining('plugin guard, whose rules guard it, did not load') });
      }
      expect(surface.tools).toContain('read');
    }
  }, 30_000);

  it('a reload that keeps a healthy policy plugin is not refused', () => {
    const { root, cfg } = setUp(CASES[0]!);
    expect(pluginReloadProblems(cfg, root)).toEqual([]);
  });

  it('plugins.entries.<id>.enabled: false runs without it, knowingly', async () => {
    const { root } = setUp(CASES.find((c) => c.name === 'register() throws')!);
    const cfg = config({ plugins: { paths: ['plugins'], entries: { guard: { enabled: false } } } });
    const runtime = createPluginRuntime(cfg, root);
    await runtime.load(LOAD_MS);
    expect(runtime.refusal()).toBeUndefined();
  });
});

/** The inputs of a runtime loaded outside `loadPluginRuntime`, handed over as a reload hands it. */
function surfaceInputsFor(cfg: ReturnType<typeof config>, root: string, runtime: ReturnType<typeof createPluginRuntime>) {
  adoptPluginRuntime(cfg, root, runtime);
  return surfaceInputs(cfg, root);
}
