// resolveToolSurface on the OpenClaw comparison's input (openclaw-surface.ts), for CPU
// attribution: `npx tsx bench/profile-surface.ts [N] [OUT.cpuprofile]` prints µs per call and
// writes a CPU profile of the measured calls (after a warm-up) when OUT is given.
import { parseConfig } from '../src/config/index.js';
import type { TurnContext } from '../src/policy/context.js';
import { resolveToolSurface } from '../src/policy/surface.js';
import { performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
const STEPS = {
  profileAlsoAllow: ['plug1*', 'browser'], providerAlsoAllow: ['plug*_tool1', 'plug1*', 'browser'], globalDeny: ['plug3_*', 'memory_*'], globalProviderDeny: ['plug4_tool2*'],
  agentDeny: ['plug2_*'], agentProviderDeny: ['*_tool4*'], groupDeny: ['plug10_*', 'sessions_*'], senderDeny: ['plug6_*', 'plug5_tool1*'], sandboxDeny: ['plug7_tool1*', 'web_f*'],
};
const parsed = parseConfig({
  agents: { list: [{ id: 'main', tools: { deny: STEPS.agentDeny, byProvider: { openai: { deny: STEPS.agentProviderDeny } } } }] },
  tools: { profile: 'coding', alsoAllow: STEPS.profileAlsoAllow, deny: STEPS.globalDeny, byProvider: { 'openai/gpt-5': { profile: 'coding', alsoAllow: STEPS.providerAlsoAllow, deny: STEPS.globalProviderDeny } }, toolsBySender: { '*': { deny: STEPS.senderDeny } }, sandbox: { tools: { deny: STEPS.sandboxDeny } } },
  channels: { discord: { guilds: { '111': { channels: { general: { tools: { deny: STEPS.groupDeny } } } } } } },
});
if (!parsed.ok) throw parsed.error;
const config = parsed.value.config;
const turn: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', guildId: '111', channelId: '999', channelName: 'general', senderId: '7', senderIsOwner: true, model: 'openai/gpt-5', spawnDepth: 0, sandboxed: true };
const implemented = () => ({ ok: true }) as const;
const opts = { implemented };
const N = Number(process.argv[2] ?? 200000);
const out = process.argv[3];
const session = out ? new Session() : undefined;
const post = (method: string, params?: object) => new Promise<any>((resolve, reject) => session!.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
for (let i = 0; i < 20000; i++) resolveToolSurface(config, turn, opts);
if (session) {
  session.connect();
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 50 });
  await post('Profiler.start');
}
for (let r = 0; r < 3; r++) {
  const t = performance.now();
  for (let i = 0; i < N; i++) resolveToolSurface(config, turn, opts);
  console.log('µs/call', (((performance.now() - t) * 1000) / N).toFixed(2));
}

if (session) writeFileSync(out!, JSON.stringify((await post('Profiler.stop')).profile));
