import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config, turn } from '../policy/testing.js';
import { resolveToolSurface } from '../policy/surface.js';
import { surfaceInputs } from '../app/surface-inputs.js';
import { createPluginRuntime, loadPluginRuntime, type PluginRuntime } from './runtime.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/plugins/rules');
const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('the rules fixture: every registration rule with its diagnostic', () => {
  let runtime: PluginRuntime;
  const cfg = config({ plugins: { paths: [FIXTURE], entries: { fixture: { enabled: true } } }, tools: { profile: 'coding' } });

  beforeAll(async () => {
    runtime = await loadPluginRuntime(cfg, FIXTURE);
  });

  const messages = () => runtime.plugins[0]!.diagnostics.map((d) => `${d.level}: ${d.message}`);

  it('loads the plugin and lists what it registered', () => {
    const p = runtime.plugins[0]!;
    expect(p).toMatchObject({ id: 'fixture', status: 'loaded', version: '0.0.1' });
    expect(p.declaredTools).toEqual(['fx_plain', 'fx_factory', 'fx_optional', 'fx_dm_only', 'fx_any', 'fx_broken']);
    expect(p.tools.sort()).toEqual(['fx_any', 'fx_broken', 'fx_dm_only', 'fx_factory', 'fx_optional', 'fx_plain']);
    expect(p.hooks).toEqual([
      { name: 'before_tool_call', priority: 5, toolMatcher: ['fx_plain'] },
      { name: 'session_start', priority: 0 },
    ]);
    expect(p.commands).toEqual(['fx']);
    expect(p.trustedPolicies).toEqual(['fx-policy']);
    expect(p.skillsDirs).toEqual([path.join(FIXTURE, 'skills')]);
    expect(runtime.skillsDirs()).toEqual([path.join(FIXTURE, 'skills')]);
    expect(p.config).toEqual({ greeting: 'hello' });
  });

  it.each([
    ['error: plugin tool name conflict (fixture): read', 'a declared name that is a core tool'],
    ['error: plugin must declare contracts.tools for: fx_secret', 'registering a name not in contracts.tools'],
    ['error: unsupported plugin tool context version', 'an OpenClaw version-2 factory'],
    ['error: plugin tool is malformed (fixture): fx_plain has no execute function', 'a plain tool without execute'],
    ['warn: unknown typed hook "before_tool" ignored', 'an unknown hook name'],
    ['warn: typed hook "llm_input" is never emitted by Warden (use model_call_started); its handler will not run', 'an OpenClaw hook Warden does not emit'],
    ['warn: typed hook "before_prompt_build" blocked because non-bundled plugins must set plugins.entries.fixture.hooks.allowConversationAccess=true', 'a conversation hook without access'],
    ['warn: typed hook "session_start" ignores tool matcher', 'a matcher on a hook without a tool'],
    ['error: typed hook "after_tool_call": toolMatcher entry "*" is not a tool name; omit toolMatcher to see every tool', 'a wildcard matcher'],
    ['error: plugin must declare contracts.trustedToolPolicies for: fx-undeclared', 'an undeclared trusted policy'],
    ["error: command registration failed: /tools is one of Warden's own commands", 'a reserved command name'],
    ['error: command already registered: /fx (fixture)', 'a command registered twice'],
    ['error: skills dir ../ is outside the plugin folder', 'a skills folder outside the plugin'],
    ['error: skills dir missing is not a directory', 'a missing skills folder'],
  ])('%s (%s)', (message) => {
    expect(messages()).toContain(message);
  });

  it('factory output is inspected when a turn builds it: undeclared and malformed tools are dropped with their diagnostic', () => {
    const ctx = turn({ provider: 'discord', chat: 'channel', channelId: 'C1', channelName: 'dev', senderId: 'u1' });
    expect(runtime.availability('fx_any', ctx)).toEqual({ ok: true });
    expect(runtime.availability('fx_broken', ctx)).toEqual({ ok: false, why: 'the plugin built no such tool for this turn' });
    expect(messages()).toContain('error: plugin tool is undeclared (fixture): fx_ghost');
    expect(messages()).toContain('error: plugin tool is malformed (fixture): fx_broken has no execute function');
    expect(runtime.implementation('read', ctx)).toBeUndefined();
  });

  it('a factory gets the turn\'s context and may build nothing for it', () => {
    const dm = turn({ chat: 'dm', senderId: 'u2', senderIsOwner: true });
    const channel = turn({ provider: 'slack', chat: 'channel', channelId: 'C9', channelName: 'ops', senderId: 'u3' });
    expect(runtime.availability('fx_dm_only', dm)).toEqual({ ok: true });
    expect(runtime.availability('fx_dm_only', channel)).toEqual({ ok: false, why: 'the plugin built no such tool for this turn' });
    expect(runtime.implementation('fx_factory', channel)?.description).toBe('built for main in ops, owner false, greeting hello');
    expect(runtime.implementation('fx_factory', dm)?.description).toBe('built for main in dm, owner true, greeting hello');
  });

  it('registration after register(api) returned is refused', async () => {
    const { lateApi } = fixtureState();
    lateApi!.registerTool({ name: 'fx_plain', description: 'x', parameters: {}, execute: () => ({}) });
    expect(messages()).toContain('warn: api.registerTool called after register(api) returned; ignored');
  });

  it('an optional tool joins only when an allowlist names it, the plugin id, group:plugins or *', () => {
    const ids = (tools: Record<string, unknown>) => {
      const c = config({ plugins: cfg.plugins, tools });
      // The same runtime (loaded for cfg) answers availability; the policy decides from `c`.
      return resolveToolSurface(c, turn(), { ...surfaceInputs(cfg, FIXTURE) }).tools.filter((t) => t.startsWith('fx_'));
    };
    expect(ids({ profile: 'coding' })).toEqual(['fx_any', 'fx_dm_only', 'fx_factory', 'fx_plain']);
    for (const grant of ['fx_optional', 'fixture', 'group:plugins', '*']) expect(ids({ profile: 'coding', alsoAllow: [grant] }), grant).toContain('fx_optional');
    expect(ids({ profile: 'coding', alsoAllow: ['fx_other'] })).not.toContain('fx_optional');
  });

  it('a deny of the plugin id or group:plugins removes its tools before any factory runs', async () => {
    const { seen } = fixtureState();
    const before = seen.length;
    for (const deny of ['fixture', 'group:plugins', 'fx_*']) {
      const c = config({ plugins: cfg.plugins, tools: { profile: 'coding', deny: [deny] } });
      const result = resolveToolSurface(c, turn({ channelName: `never-${deny}` }), surfaceInputs(cfg, FIXTURE));
      expect(result.tools.some((t) => t.startsWith('fx_')), deny).toBe(false);
      expect(result.removed).toContainEqual({ tool: 'fx_factory', by: 'tools.deny' });
    }
    expect(seen.length).toBe(before);
  });

  it('hooks.allowPromptInjection: false refuses before_prompt_build; allowConversationAccess admits it', async () => {
    const refused = await createLoaded(config({ plugins: { paths: [FIXTURE], entries: { fixture: { enabled: true, hooks: { allowConversationAccess: true, allowPromptInjection: false } } } } }), FIXTURE);
    expect(refused.plugins[0]!.diagnostics.map((d) => d.message)).toContain('typed hook "before_prompt_build" blocked by plugins.entries.fixture.hooks.allowPromptInjection=false');
    const admitted = await createLoaded(config({ plugins: { paths: [FIXTURE], entries: { fixture: { enabled: true, hooks: { allowConversationAccess: true } } } } }), FIXTURE);
    expect(admitted.plugins[0]!.hooks.map((h) => h.name)).toContain('before_prompt_build');
  });

  it('a timeout for a hook that does not exist is reported', () => {
    const c = config({ plugins: { paths: [FIXTURE], entries: { fixture: { hooks: { timeouts: { before_tool_cal: 5_000, before_tool_call: 5_000 } } } } } });
    expect(createPluginRuntime(c, FIXTURE).plugins[0]!.diagnostics.map((d) => d.message).sort()).toEqual([
      'plugin tool name conflict (fixture): read',
      'plugins.entries.fixture.hooks.timeouts.before_tool_cal: no hook of that name; the timeout applies to nothing',
    ]);
  });

  it('without explicit enablement the trusted policy is refused', async () => {
    const other = await createLoaded(config({ plugins: { paths: [FIXTURE] } }), FIXTURE);
    expect(other.plugins[0]!.diagnostics.map((d) => d.message)).toContain('plugin must be explicitly enabled to register trusted tool policy: fx-policy');
    expect(other.trustedPolicies).toEqual([]);
    // The policy its manifest declares is missing, so the plugin does not load, and nothing runs without it.
    expect(other.plugins[0]).toMatchObject({ status: 'error', why: expect.stringContaining('declares trusted tool policy fx-policy but register(api) did not register it') });
    expect(other.refusal()).toMatch(/^plugin fixture did not load .* Warden does not run without its rules/);
  });
});

/** The fixture's own record of what happened (the runtime imports it through tsx: another module instance). */
const fixtureState = () => (globalThis as { __wardenRulesFixture?: { seen: unknown[]; lateApi?: { registerTool: (t: unknown) => void } } }).__wardenRulesFixture!;

async function createLoaded(c: ReturnType<typeof config>, baseDir: string): Promise<PluginRuntime> {
  const runtime = createPluginRuntime(c, baseDir);
  await runtime.load(2_000);
  return runtime;
}

describe('plugins that cannot load are reported and skipped', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'warden-plugin-load-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  function plugin(dir: string, manifest: Record<string, unknown>, files: Record<string, string> = {}): void {
    mkdirSync(path.join(root, 'plugins', dir), { recursive: true });
    writeFileSync(path.join(root, 'plugins', dir, 'warden.plugin.json'), JSON.stringify(manifest));
    for (const [name, body] of Object.entries(files)) writeFileSync(path.join(root, 'plugins', dir, name), body);
  }

  const cases: Array<[string, () => void, RegExp, 'error' | 'blocked']> = [
    ['throws while its module loads', () => plugin('a', { id: 'crash-import' }, { 'index.mjs': 'throw new Error("boom at import");' }), /entry module index\.mjs failed to load: boom at import/, 'error'],
    ['throws in register', () => plugin('b', { id: 'crash-register' }, { 'index.mjs': 'export function register() { throw new Error("boom in register"); }' }), /register\(api\) threw: boom in register/, 'error'],
    ['exports no register', () => plugin('c', { id: 'no-register' }, { 'index.mjs': 'export const x = 1;' }), /exports no register\(api\)/, 'error'],
    ['never finishes registering', () => plugin('d', { id: 'hangs' }, { 'index.mjs': 'export function register() { return new Promise(() => {}); }' }), /did not finish registering within 300 ms/, 'error'],
    ['has no entry module', () => plugin('e', { id: 'manifest-only', contracts: { tools: ['mo_tool'] } }), /no entry module/, 'error'],
    ['has an invalid config', () => plugin('f', { id: 'needs-url', configSchema: { type: 'object', required: ['baseUrl'], properties: { baseUrl: { type: 'string' }, retries: { type: 'integer' } }, additionalProperties: false } }, { 'index.mjs': 'export function register() {}' }), /plugins\.entries\.needs-url\.config\.baseUrl: is required; plugins\.entries\.needs-url\.config\.extra: is not a known key; plugins\.entries\.needs-url\.config\.retries: must be integer/, 'error'],
    ['has config but no configSchema', () => plugin('g', { id: 'no-schema' }, { 'index.mjs': 'export function register() {}' }), /declares no configSchema/, 'error'],
    ['has an id that is a core tool name', () => plugin('h', { id: 'Exec' }, { 'index.mjs': 'export function register() {}' }), /plugin id conflicts with core tool name \(exec\)/, 'blocked'],
    ['has an id that is a Tool Search tool', () => plugin('h2', { id: 'tool_call' }, { 'index.mjs': 'export function register() {}' }), /plugin id conflicts with core tool name \(tool_call\)/, 'blocked'],
    ['has the id that means every MCP tool', () => plugin('h3', { id: 'bundle-mcp' }, { 'index.mjs': 'export function register() {}' }), /plugin id is reserved \(bundle-mcp\)/, 'blocked'],
    ['has an id that is not a plain name', () => plugin('h4', { id: 'group:fs' }, { 'index.mjs': 'export function register() {}' }), /plugin id must be letters, digits/, 'blocked'],
    ['names an entry outside its folder', () => {
      plugin('i', { id: 'escapes' }, { 'package.json': JSON.stringify({ warden: { extensions: ['./link.mjs'] } }) });
      writeFileSync(path.join(root, 'outside.mjs'), 'export function register() {}');
      symlinkSync(path.join(root, 'outside.mjs'), path.join(root, 'plugins', 'i', 'link.mjs'));
    }, /entry module \.\/link\.mjs is outside the plugin folder/, 'error'],
  ];

  it.each(cases)('a plugin that %s', async (_name, make, why, status) => {
    make();
    const c = config({
      plugins: { paths: ['plugins'], entries: { 'needs-url': { config: { retries: 1.5, extra: true } }, 'no-schema': { config: { a: 1 } } } },
      tools: { profile: 'coding' },
    });
    const runtime = createPluginRuntime(c, root);
    await runtime.load(300);
    const found = runtime.plugins.find((p) => why.test(p.why ?? ''));
    expect(found, JSON.stringify(runtime.plugins.map((p) => [p.id, p.status, p.why]))).toBeDefined();
    expect(found!.status).toBe(status);
    // Nothing of it is left registered.
    expect(found!.tools).toEqual([]);
    expect(found!.hooks).toEqual([]);
  });

  it('the others still load, and a failed plugin\'s declared tools are unavailable with why', async () => {
    plugin('z-good', { id: 'good', contracts: { tools: ['good_tool'] } }, { 'index.mjs': 'export default { register(api) { api.registerTool({ name: "good_tool", description: "g", parameters: { type: "object" }, execute: () => "ok" }); } };' });
    const c = config({ plugins: { paths: ['plugins'] }, tools: { profile: 'coding', alsoAllow: ['group:plugins'] } });
    const runtime = createPluginRuntime(c, root);
    await runtime.load(300);
    expect(runtime.plugins.find((p) => p.id === 'good')).toMatchObject({ status: 'loaded', tools: ['good_tool'] });
    expect(runtime.availability('good_tool', turn())).toEqual({ ok: true });
    expect(runtime.availability('mo_tool', turn())).toEqual({ ok: false, why: expect.stringMatching(/^plugin manifest-only did not load: no entry module/) });
  });
});

describe('npm packages named in plugins.load', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'warden-plugin-pkg-'));
    const pkg = path.join(root, 'node_modules', '@team', 'warden-hello');
    mkdirSync(path.join(pkg, 'dist'), { recursive: true });
    writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: '@team/warden-hello', version: '1.2.0', warden: { extensions: ['./dist/plugin.mjs'] } }));
    writeFileSync(path.join(pkg, 'openclaw.plugin.json'), JSON.stringify({ id: 'hello', configSchema: { type: 'object' }, contracts: { tools: ['hello'] } }));
    writeFileSync(path.join(pkg, 'dist', 'plugin.mjs'), 'export default function (api) { api.registerTool({ name: "hello", description: "h", parameters: { type: "object" }, execute: () => "hi" }); }');
    mkdirSync(path.join(root, 'conf'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it.each([
    ['@team/warden-hello', 'loaded', undefined],
    ['@team/warden-hello@1.2.0', 'loaded', undefined],
    ['@team/warden-hello@1.3.0', 'error', 'plugins.load pins @team/warden-hello@1.3.0 but 1.2.0 is installed'],
  ])('%s → %s', async (spec, status, why) => {
    const runtime = createPluginRuntime(config({ plugins: { load: [spec] } }), path.join(root, 'conf'));
    await runtime.load(2_000);
    expect(runtime.plugins[0]).toMatchObject({ id: 'hello', status, origin: 'package', version: '1.2.0', packageName: '@team/warden-hello', ...(why ? { why } : {}) });
  });

  it('says when a named package is not installed', () => {
    const runtime = createPluginRuntime(config({ plugins: { load: ['warden-missing'] } }), root);
    expect(runtime.diagnostics.map((d) => d.message)).toEqual([`plugins.load: package warden-missing is not installed (no node_modules/warden-missing from ${root} up)`]);
  });
});

describe('the SDK types', () => {
  it('are exported as warden/plugin', async () => {
    const pkg = (await import(path.join(SRC, '../package.json'), { with: { type: 'json' } })) as { default: { exports: Record<string, string> } };
    expect(pkg.default.exports['./plugin']).toBe('./src/plugins/sdk.ts');
  });
});
