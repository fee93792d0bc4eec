// One turn's tool surface: (a) the core catalog, (b) core + 1,000 synthetic plugin tools, both
// under a config with a glob policy at every pipeline step. Target for (b): ≤ 1 ms median.
// Then Warden against OpenClaw's applyToolPolicyPipeline on the same 9-step input
// (openclaw-surface.ts), under this Node and under Node 24 when it has been fetched.
import { parseConfig } from '../src/config/index.js';
import { inheritFrom, resolveToolSurface } from '../src/policy/surface.js';
import type { TurnContext } from '../src/policy/context.js';
import type { ToolMeta } from '../src/tools/types.js';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmtMs, fmtRatio, measure, type Bench, type BenchRow } from './harness.js';
import { compareWithOpenClaw, type Comparison } from './openclaw-surface.js';
// @ts-expect-error plain JavaScript without types
import { NODE24_BIN } from '../scripts/fetch-bench-refs.mjs';

const PLUGINS = 20;
const TOOLS_PER_PLUGIN = 50;

const plugins: ToolMeta[] = [];
for (let p = 0; p < PLUGINS; p++) {
  for (let t = 0; t < TOOLS_PER_PLUGIN; t++) {
    plugins.push({
      id: `plug${p}_tool${t}`,
      label: `plug${p} tool ${t}`,
      description: 'synthetic',
      section: 'plugins',
      profiles: t % 2 === 0 ? ['coding'] : [],
      inWardenGroup: false,
      ownerOnly: false,
      source: { kind: 'plugin', pluginId: `plug${p}` },
    });
  }
}

const parsed = parseConfig({
  owners: { discord: ['42'] },
  agents: {
    defaults: { subagents: { maxSpawnDepth: 3 } },
    list: [{ id: 'main', tools: { alsoAllow: ['plug1*', 'browser'], deny: ['plug2_*'], byProvider: { openai: { deny: ['*_tool4?'] } }, toolsBySender: { 'id:7': { deny: ['plug5_tool1*'] } } } }],
  },
  tools: {
    profile: 'coding',
    deny: ['plug3_*', 'memory_*'],
    byProvider: { 'openai/gpt-5': { profile: 'coding', alsoAllow: ['plug*_tool1'] }, openai: { deny: ['plug4_tool2*'] } },
    toolsBySender: { '*': { deny: ['plug6_*'] } },
    sandbox: { tools: { deny: ['plug7_tool?', 'web_f*'] } },
    subagents: { tools: { deny: ['plug8_*'] } },
  },
  channels: {
    discord: {
      guilds: {
        '111': {
          tools: { deny: ['plug9_*'] },
          channels: { general: { tools: { deny: ['plug10_*', 'exec'] }, toolsBySender: { 'id:7': { deny: ['plug11_*', 'e*'] } } } },
        },
      },
    },
  },
});
if (!parsed.ok) throw parsed.error;
const config = parsed.value.config;

const base: TurnContext = {
  agentId: 'main',
  provider: 'discord',
  chat: 'thread',
  guildId: '111',
  channelId: '999',
  channelName: 'general',
  threadId: '555',
  senderId: '7',
  senderIsOwner: false,
  model: 'openai/gpt-5',
  spawnDepth: 1,
  sandboxed: true,
};
const available = { implemented: () => ({ ok: true }) as const };

function turn(withPlugins: boolean): () => unknown {
  const options = { ...available, ...(withPlugins ? { plugins } : {}) };
  // The parent surface is computed once, as the router stores it with the child session.
  const parent = resolveToolSurface(config, { ...base, spawnDepth: 0 }, options);
  const ctx: TurnContext = { ...base, inherited: inheritFrom(parent) };
  return () => resolveToolSurface(config, ctx, options);
}

const bench: Bench = async (report) => {
  const a = await measure(turn(false), { iterations: 2000 });
  const b = await measure(turn(true), { iterations: 1000 });
  report({ name: '(a) core catalog (27 tools), glob policy at every step', value: fmtMs(a.median), note: `p99 ${fmtMs(a.p99)}` });
  report({ name: '(b) core + 1,000 plugin tools, glob policy at every step', value: fmtMs(b.median), note: `p99 ${fmtMs(b.p99)}; target ≤ 1 ms` });
  report({ name: 'ratio b/a', value: fmtRatio(b.median / a.median) });

  const here = await compareWithOpenClaw();
  reportComparison(report, `node ${process.version}`, here);
  const node24 = NODE24_BIN as string;
  if (typeof here === 'string') return;
  if (!existsSync(node24)) {
    report({ name: 'vs OpenClaw on Node 24', value: 'skipped', note: 'run `node scripts/fetch-bench-refs.mjs` to fetch Node 24' });
    return;
  }
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'openclaw-surface.ts');
  const version = execFileSync(node24, ['--version'], { encoding: 'utf8' }).trim();
  const out = execFileSync(node24, ['--import', 'tsx', script, '--json'], { encoding: 'utf8', env: { ...process.env, WARDEN_LOG_LEVEL: 'silent' } });
  reportComparison(report, `node ${version}`, JSON.parse(out.trim().split('\n').pop()!) as Comparison[] | string);
};

function reportComparison(report: (row: BenchRow) => void, runtime: string, result: Comparison[] | string): void {
  if (typeof result === 'string') {
    report({ name: `vs OpenClaw applyToolPolicyPipeline, 9-step input (${runtime})`, value: 'skipped', note: result.replace(/^skipped: /, '') });
    return;
  }
  for (const c of result) {
    report({
      name: `vs OpenClaw, 9 steps, ${c.name} (${runtime})`,
      value: fmtMs(c.warden),
      note: `OpenClaw ${fmtMs(c.openclaw)}: ${fmtRatio(c.openclaw / c.warden)} faster (target ≥ 20×, ratio of medians measured in this run)${c.same ? ', same tools kept' : `; ${c.note}`}`,
    });
  }
}
export default bench;
