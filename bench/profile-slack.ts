// One bot kind on the Slack fake, bursts of signed events only, for `--cpu-prof`-style
// attribution: `npx tsx bench/profile-slack.ts bare|adapter|warden [BURSTS] [OUT.cpuprofile]`
// prints CPU µs per message (this process: bot and fake) and the bursts' messages/s.
import { App, LogLevel } from '@slack/bolt';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createSlackAdapter } from '../adapters/slack/index.js';
import { parseConfig } from '../src/config/index.js';
import { Gateway } from '../src/gateway/gateway.js';
import { log } from '../src/log/log.js';
import { ApprovalLedger } from '../test/fakes/approval-ledger.js';
import { startSlackFake } from '../test/fakes/slack/index.js';

log.level = 'warn';
const SECRET = 'bench-signing-secret';
const kind = process.argv[2] ?? 'bare';
const BURSTS = Number(process.argv[3] ?? 10);
const out = process.argv[4];
const fake = await startSlackFake();
const waiting = new Map<string, () => void>();
fake.requests.subscribe((r) => {
  if (r.path !== '/api/chat.postMessage') return;
  const text = r.body?.text as string;
  const done = waiting.get(text);
  if (done) {
    waiting.delete(text);
    done();
  }
});
let url = '';
let stop: () => Promise<void>;
if (kind === 'bare') {
  const app = new App({ token: 'xoxb-fake', signingSecret: SECRET, clientOptions: { slackApiUrl: fake.apiUrl }, logLevel: LogLevel.ERROR });
  app.message(async ({ message }) => {
    const m = message as { channel: string; text?: string };
    void app.client.chat.postMessage({ channel: m.channel, text: m.text ?? '' });
  });
  const server = (await app.start({ port: 0, host: '127.0.0.1' })) as Server;
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
  stop = () => app.stop() as Promise<void>;
} else {
  const adapter = createSlackAdapter(
    { botToken: 'xoxb-fake', signingSecret: SECRET, appToken: undefined, apiUrl: fake.apiUrl, port: 0, host: '127.0.0.1', requireMention: false, channels: {} } as never,
    { onApprovalClick: new ApprovalLedger([]).onApprovalClick, approvers: [], approvalsTarget: 'channel' },
  );
  if (kind === 'adapter') {
    await adapter.start(async (m) => adapter.send({ provider: 'slack', channelId: m.channelId, threadId: m.threadId }, { text: m.text }));
    stop = () => adapter.stop();
  } else {
    const parsed = parseConfig({ models: { default: 'openai/instant' }, channels: { slack: { requireMention: false } } });
    if (!parsed.ok) throw parsed.error;
    const gateway = new Gateway({
      config: parsed.value.config,
      adapters: [adapter],
      agent: { runTurn: async (r: { input: { text: string } }) => ({ status: 'completed', reply: r.input.text, rounds: 1, usage: { inputTokens: 0, outputTokens: 0 } }) } as never,
      tools: undefined,
      toolReport: () => ({ tools: [], removed: [], unavailable: [], warnings: [] }),
      approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
    } as never);
    await gateway.start();
    stop = () => gateway.stop();
  }
  url = adapter.eventsUrl!;
}
let next = 0;
const trigger = (text: string) => fake.sendEvent(url, fake.envelope(fake.messageEvent({ user: 'U0000ALICE', channel: `C0000GEN${next++ % 20}`, text })), { secret: SECRET });
// Warm-up (JIT, channel names cached), not measured.
for (let i = 0; i < 100; i++) {
  const done = new Promise<void>((r) => waiting.set(`w-${i}`, r));
  await trigger(`w-${i}`);
  await done;
}
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
for (let b = 0; b < BURSTS; b++) {
  const start = performance.now();
  const all: Promise<void>[] = [];
  for (let i = 0; i < 200; i++) {
    const text = `${kind}-${b}-${i}`;
    all.push(new Promise((r) => waiting.set(text, r)));
    void trigger(text);
  }
  await Promise.all(all);
  rates.push(200 / ((performance.now() - start) / 1000));
  fake.requests.clear();
  fake.messages.clear();
}
const cpu = process.cpuUsage(cpu0);
if (session) writeFileSync(out!, JSON.stringify((await post('Profiler.stop')).profile));
await stop();
await fake.close();
rates.sort((a, b) => a - b);
console.log(kind, 'cpu µs/msg', ((cpu.user + cpu.system) / (BURSTS * 200)).toFixed(0), 'median msg/s', rates[Math.floor(rates.length / 2)]!.toFixed(0));
