// Plugins on the hot paths: (1) one turn's surface with 50 loaded plugins × 20 factory-built
// tools against the same config without plugins; (2) the per-call cost of 5 registered
// before_tool_call hooks on a trivial tool through the whole call chain.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseConfig } from '../src/config/index.js';
import { HookBus } from '../src/hooks/bus.js';
import { loadPluginRuntime } from '../src/plugins/runtime.js';
import type { TurnContext } from '../src/policy/context.js';
import { resolveToolSurface } from '../src/policy/surface.js';
import { ToolInvoker } from '../src/tools/invoke/chain.js';
import { surfaceInputs } from '../src/app/surface-inputs.js';
import type { ToolImplementation } from '../src/tools/types.js';
import { fmtMs, fmtRatio, measure, type Bench } from './harness.js';

const PLUGINS = 50;
const TOOLS = 20;

function writePlugins(root: string): void {
  for (let p = 0; p < PLUGINS; p++) {
    const dir = path.join(root, 'plugins', `p${p}`);
    mkdirSync(dir, { recursive: true });
    const names = Array.from({ length: TOOLS }, (_, t) => `p${p}_t${t}`);
    writeFileSync(path.join(dir, 'warden.plugin.json'), JSON.stringify({ id: `p${p}`, contracts: { tools: names }, toolMetadata: Object.fromEntries(names.map((n) => [n, { profiles: ['coding'] }])) }));
    writeFileSync(
      path.join(dir, 'index.mjs'),
      `const names = ${JSON.stringify(names)};
export function register(api) {
  api.registerTool((ctx) => names.map((name) => ({ name, description: name + ' for ' + ctx.agentId, parameters: { type: 'object', properties: {} }, execute: () => 'ok' })));
}`,
    );
  }
}

const policy = {
  tools: { profile: 'coding', deny: ['p3_*'], alsoAllow: ['browser'] },
  channels: { discord: { guilds: { '111': { channels: { general: { tools: { deny: ['p4_*', 'exec'] } } } } } } },
};

const ctx = (i: number): TurnContext => ({
  agentId: 'main',
  provider: 'discord',
  chat: 'channel',
  guildId: '111',
  channelId: '222',
  channelName: 'general',
  // A new sender every few turns: most turns reuse their context's built factories, some build them.
  senderId: `u${i % 16}`,
  senderIsOwner: false,
  spawnDepth: 0,
  model: 'anthropic/claude-sonnet-4-5',
});

const bench: Bench = async (report) => {
  const root = mkdtempSync(path.join(tmpdir(), 'warden-bench-plugins-'));
  try {
    writePlugins(root);
    const withParsed = parseConfig({ ...policy, plugins: { paths: ['plugins'] } });
    const withoutParsed = parseConfig(policy);
    if (!withParsed.ok || !withoutParsed.ok) throw new Error('bench config');
    const withPlugins = withParsed.value.config;
    const without = withoutParsed.value.config;
    const loadStart = performance.now();
    const runtime = await loadPluginRuntime(withPlugins, root);
    const loadMs = performance.now() - loadStart;
    const pluginInputs = surfaceInputs(withPlugins, root);
    const coreInputs = surfaceInputs(without, root);
    const check = resolveToolSurface(withPlugins, ctx(0), pluginInputs);
    if (check.tools.filter((t) => t.includes('_t')).length !== (PLUGINS - 2) * TOOLS) throw new Error(`expected ${(PLUGINS - 2) * TOOLS} plugin tools, got ${check.tools.length}`);

    let i = 0;
    const base = await measure(() => resolveToolSurface(without, ctx(i++), coreInputs), { iterations: 2000 });
    i = 0;
    const plugged = await measure(() => resolveToolSurface(withPlugins, ctx(i++), pluginInputs), { iterations: 2000 });
    report({ name: `load ${PLUGINS} plugins (import + register)`, value: fmtMs(loadMs), note: `${runtime.plugins.filter((p) => p.status === 'loaded').length} loaded` });
    report({ name: 'surface, core only', value: fmtMs(base.median), note: `p99 ${fmtMs(base.p99)}` });
    report({ name: `surface, core + ${PLUGINS} plugins × ${TOOLS} tools (factories per context)`, value: fmtMs(plugged.median), note: `p99 ${fmtMs(plugged.p99)}` });
    report({ name: 'ratio plugins / core', value: fmtRatio(plugged.median / base.median) });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }

  // 2. Five before_tool_call hooks on every call.
  const echo: ToolImplementation = { id: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } }, execute: async (args) => ({ content: [{ type: 'text', text: String(args.text) }] }) };
  const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'dm', senderId: 'local', senderIsOwner: true, spawnDepth: 0 };
  const invokerWith = (hooks: number) => {
    const bus = new HookBus();
    for (let h = 0; h < hooks; h++) bus.on('before_tool_call', (e) => (e.params.text === 'never' ? { block: true } : undefined), { owner: `p${h}` });
    return new ToolInvoker({ resolveTool: () => echo, hooks: bus });
  };
  const none = invokerWith(0);
  const five = invokerWith(5);
  let n = 0;
  const call = (invoker: ToolInvoker) => invoker.invoke({ tool: 'echo', args: { text: `hi ${n++}` }, turn, sessionKey: 'bench', workspaceDir: '/tmp', surface: { tools: ['echo'] }, loopDetection: false });
  const a = await measure(() => call(none), { iterations: 5000 });
  const b = await measure(() => call(five), { iterations: 5000 });
  report({ name: 'call through the chain, no hooks', value: fmtMs(a.median), note: `p99 ${fmtMs(a.p99)}` });
  report({ name: 'call through the chain, 5 before_tool_call hooks', value: fmtMs(b.median), note: `p99 ${fmtMs(b.p99)}` });
  report({ name: 'overhead of 5 hooks per call', value: fmtMs(b.median - a.median), note: `ratio ${fmtRatio(b.median / a.median)}` });
};

export default bench;
