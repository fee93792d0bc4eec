// Warden's resolveToolSurface against OpenClaw's compiled applyToolPolicyPipeline on the same
// 9-step input (profile, provider profile, global, global provider, agent, agent provider,
// channel group, sender, sandbox — a glob policy at each), over the core catalog and over core +
// 1,000 plugin tools, in one process. Both must keep the same tools, or the row says so.
// Imported by surface.bench.ts; run directly (`--json`) to measure under another Node binary.
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseConfig } from '../src/config/index.js';
import type { TurnContext } from '../src/policy/context.js';
import { resolveToolSurface } from '../src/policy/surface.js';
import { CORE_TOOLS, profileAllowlist } from '../src/policy/catalog.js';
import type { ToolMeta } from '../src/tools/types.js';
import { measure } from './harness.js';
// @ts-expect-error plain JavaScript without types
import { openClawPipelineModule } from '../scripts/fetch-bench-refs.mjs';

export interface Comparison {
  name: string;
  warden: number;
  openclaw: number;
  same: boolean;
  note?: string;
}

const PLUGINS = 20;
const TOOLS_PER_PLUGIN = 50;
const plugins: ToolMeta[] = [];
for (let p = 0; p < PLUGINS; p++) {
  for (let t = 0; t < TOOLS_PER_PLUGIN; t++) {
    plugins.push({ id: `plug${p}_tool${t}`, label: `plug${p} tool ${t}`, description: 'synthetic', section: 'plugins', profiles: [], inWardenGroup: false, ownerOnly: false, source: { kind: 'plugin', pluginId: `plug${p}` } });
  }
}

// The nine steps' entries, written once and handed to both. (Only `*` globs, which both read
// alike; Warden also removes `process` with `exec`, so exec is not denied here.)
const STEPS = {
  profileAlsoAllow: ['plug1*', 'browser'],
  providerAlsoAllow: ['plug*_tool1', 'plug1*', 'browser'],
  globalDeny: ['plug3_*', 'memory_*'],
  globalProviderDeny: ['plug4_tool2*'],
  agentDeny: ['plug2_*'],
  agentProviderDeny: ['*_tool4*'],
  groupDeny: ['plug10_*', 'sessions_*'],
  senderDeny: ['plug6_*', 'plug5_tool1*'],
  sandboxDeny: ['plug7_tool1*', 'web_f*'],
};

const parsed = parseConfig({
  agents: { list: [{ id: 'main', tools: { deny: STEPS.agentDeny, byProvider: { openai: { deny: STEPS.agentProviderDeny } } } }] },
  tools: {
    profile: 'coding',
    alsoAllow: STEPS.profileAlsoAllow,
    deny: STEPS.globalDeny,
    byProvider: { 'openai/gpt-5': { profile: 'coding', alsoAllow: STEPS.providerAlsoAllow, deny: STEPS.globalProviderDeny } },
    toolsBySender: { '*': { deny: STEPS.senderDeny } },
    sandbox: { tools: { deny: STEPS.sandboxDeny } },
  },
  channels: { discord: { guilds: { '111': { channels: { general: { tools: { deny: STEPS.groupDeny } } } } } } },
});
if (!parsed.ok) throw parsed.error;
const config = parsed.value.config;
const turn: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', guildId: '111', channelId: '999', channelName: 'general', senderId: '7', senderIsOwner: true, model: 'openai/gpt-5', spawnDepth: 0, sandboxed: true };
const implemented = () => ({ ok: true }) as const;

interface OpenClawTool {
  name: string;
  pluginId?: string;
}
type Pipeline = (params: { tools: OpenClawTool[]; toolMeta: (t: OpenClawTool) => { pluginId: string } | undefined; warn: (w: string) => void; steps: unknown[] }) => OpenClawTool[];

function openClawSteps(): unknown[] {
  const coding = (profileAllowlist('coding') ?? []).filter((id) => id !== 'bundle-mcp');
  const step = (label: string, policy: { allow?: string[]; deny?: string[] }) => ({ policy, label, stripPluginOnlyAllowlist: true });
  return [
    step('tools.profile (coding)', { allow: [...coding, ...STEPS.profileAlsoAllow] }),
    step('tools.byProvider.profile (coding)', { allow: [...coding, ...STEPS.providerAlsoAllow] }),
    step('tools.allow', { deny: STEPS.globalDeny }),
    step('tools.byProvider.allow', { deny: STEPS.globalProviderDeny }),
    step('agents.main.tools.allow', { deny: STEPS.agentDeny }),
    step('agents.main.tools.byProvider.allow', { deny: STEPS.agentProviderDeny }),
    step('group tools.allow', { deny: STEPS.groupDeny }),
    step('tools.toolsBySender', { deny: STEPS.senderDeny }),
    step('sandbox tools.allow', { deny: STEPS.sandboxDeny }),
  ];
}

export async function compareWithOpenClaw(): Promise<Comparison[] | string> {
  const file = openClawPipelineModule() as string | undefined;
  if (!file || !existsSync(file)) return 'skipped: run `node scripts/fetch-bench-refs.mjs` to fetch openclaw@2026.9.6';
  const pipeline = ((await import(pathToFileURL(file).href)) as { t: Pipeline }).t;
  const steps = openClawSteps();
  const out: Comparison[] = [];
  for (const [name, withPlugins] of [['core catalog', false], ['core + 1,000 plugin tools', true]] as const) {
    const options = { implemented, ...(withPlugins ? { plugins } : {}) };
    const tools: OpenClawTool[] = [...CORE_TOOLS.map((t) => ({ name: t.id })), ...(withPlugins ? plugins.map((p) => ({ name: p.id, pluginId: (p.source as { pluginId: string }).pluginId })) : [])];
    const params = { tools, toolMeta: (t: OpenClawTool) => (t.pluginId ? { pluginId: t.pluginId } : undefined), warn: () => {}, steps };
    const ours = resolveToolSurface(config, turn, options).tools;
    const theirs = pipeline(params)
      .map((t) => t.name)
      .sort();
    const same = JSON.stringify(ours) === JSON.stringify(theirs);
    const iterations = withPlugins ? 300 : 2000;
    // Interleaved halves, so drift in the machine hits both alike.
    const w: number[] = [];
    const o: number[] = [];
    for (let half = 0; half < 2; half++) {
      w.push((await measure(() => resolveToolSurface(config, turn, options), { iterations: iterations / 2 })).median);
      o.push((await measure(() => pipeline(params), { iterations: iterations / 2 })).median);
    }
    const comparison: Comparison = { name, warden: Math.min(...w), openclaw: Math.min(...o), same };
    if (!same) {
      const only = (a: string[], b: string[]) => a.filter((x) => !b.includes(x)).slice(0, 6).join(' ');
      comparison.note = `surfaces differ: warden ${ours.length} tools, openclaw ${theirs.length} (only warden: ${only(ours, theirs)}; only openclaw: ${only(theirs, ours)})`;
    }
    out.push(comparison);
  }
  return out;
}

if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(await compareWithOpenClaw())}\n`);
