// One bot on the Discord fake, bursts of DMs only, for CPU attribution:
// `npx tsx bench/profile-discord.ts bare|adapter|warden [BURSTS] [OUT.cpuprofile]` prints CPU µs
// per message (this process: bot and fake) and the bursts' messages/s, and writes a CPU profile
// of the bursts alone (not start-up) when OUT is given.
import { performance } from 'node:perf_hooks';
import { Client, Events, Partials, Routes, type Message } from 'discord.js';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { createDiscordAdapter, DISCORD_INTENTS } from '../adapters/discord/index.js';
import { log } from '../src/log/log.js';
import { ApprovalLedger } from '../test/fakes/approval-ledger.js';
import { fakeUser, startDiscordFake } from '../test/fakes/discord/index.js';
import { parseConfig } from '../src/config/index.js';
import { Gateway } from '../src/gateway/gateway.js';
log.level = 'warn';
const kind = process.argv[2] ?? 'bare';
const UNLIMITED = { globalRequestsPerSecond: 1_000_000 };
const fake = await startDiscordFake();
const senders = Array.from({ length: 20 }, (_, i) => fakeUser(`4000000000000001${String(i).padStart(2, '0')}`, `user${i}`));
const waiting = new Map<string, () => void>();
fake.requests.subscribe((r) => {
  if (r.method === 'POST' && /^\/channels\/\d+\/messages$/.test(r.path)) { const d = waiting.get(r.body?.content as string); if (d) { waiting.delete(r.body?.content as string); d(); } }
});
let next = 0;
let stop: () => Promise<void>;
if (kind === 'bare') {
  const client = new Client({ intents: DISCORD_INTENTS, partials: [Partials.Channel], rest: { api: fake.apiBaseUrl, ...UNLIMITED } });
  client.on(Events.MessageCreate, (m: Message) => { if (m.author.bot) return; void client.rest.post(Routes.channelMessages(m.channelId), { body: { content: m.content } }); });
  const ready = once(client, Events.ClientReady); await client.login('bench'); await ready;
  stop = () => client.destroy();
} else {
  const adapter = createDiscordAdapter({ token: 'bench', apiBaseUrl: fake.apiBaseUrl, requireMention: false, guilds: {} } as any, { onApprovalClick: new ApprovalLedger([]).onApprovalClick, approvers: [], approvalsTarget: 'channel' }, { rest: UNLIMITED });
  if (kind === 'adapter') {
    await adapter.start(async (m) => adapter.send({ provider: 'discord', channelId: m.channelId, threadId: m.threadId }, { text: m.text }));
    stop = () => adapter.stop();
  } else {
    const parsed = parseConfig({ models: { default: 'openai/instant' }, channels: { discord: { requireMention: false } } });
    if (!parsed.ok) throw parsed.error;
    const gateway = new Gateway({ config: parsed.value.config, adapters: [adapter], agent: { runTurn: async (r: any) => ({ status: 'completed', reply: r.input.text, rounds: 1, usage: { inputTokens: 0, outputTokens: 0 } }) } as any, tools: undefined, toolReport: () => ({ tools: [], removed: [], unavailable: [], warnings: [] }), approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 } } as any);
    await gateway.start(); stop = () => gateway.stop();
  }
}
// Profile only the measured bursts (not start-up), when asked: `… profile-discord.ts KIND BURSTS OUT.cpuprofile`.
const out = process.argv[4];
const session = out ? new Session() : undefined;
const post = (method: string, params?: object) => new Promise<any>((resolve, reject) => session!.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
if (session) {
  session.connect();
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
}
const rates: number[] = [];
const cpu0 = process.cpuUsage();
const BURSTS = Number(process.argv[3] ?? 15);
for (let b = 0; b < BURSTS; b++) {
  const start = performance.now();
  const all: Promise<void>[] = [];
  for (let i = 0; i < 200; i++) { const text = `${kind}-${b}-${i}`; all.push(new Promise((r) => waiting.set(text, r))); void fake.userMessage({ author: senders[next++ % 20]!, dm: true, content: text }); }
  await Promise.all(all);
  rates.push(200 / ((performance.now() - start) / 1000));
  fake.requests.clear(); fake.messages.clear();
}
const cpu = process.cpuUsage(cpu0);
if (session) writeFileSync(out!, JSON.stringify((await post('Profiler.stop')).profile));
await stop(); await fake.close();
rates.sort((a, b) => a - b);
console.log(kind, 'cpu µs/msg', ((cpu.user + cpu.system) / (BURSTS * 200)).toFixed(0), 'median msg/s', rates[Math.floor(rates.length / 2)]!.toFixed(0), rates.map((r) => r.toFixed(0)).join(' '));
