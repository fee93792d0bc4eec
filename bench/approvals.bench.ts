// Approval click → result posted, for a call whose approval came after its turn ended (a
// deferred call): end to end through Warden as `warden start` runs it with the real discord.js
// adapter on the loopback Discord fake (click → the result's reply under the card, as the fake
// records it), and Warden's own share in process (decision → claim → the whole call chain →
// exec → the post handed to the adapter).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIMessage } from 'discord-api-types/v10';
import { decodeApprovalAction } from '../adapters/common/approval-card.js';
import { DbTranscriptStore } from '../src/agent/transcript.js';
import { ApprovalService } from '../src/approvals/service.js';
import { parseConfig } from '../src/config/index.js';
import { EventBus } from '../src/events/events.js';
import { DeferredCallRunner } from '../src/gateway/deferred-calls.js';
import { startWarden } from '../src/app/startup.js';
import { GovernedToolExecutor } from '../src/app/tool-executor.js';
import { openWardenStore } from '../src/app/migrations.js';
import { fakeUser, startDiscordFake } from '../test/fakes/discord/index.js';
import { fmtMs, summarize, type Bench } from './harness.js';

const GUILD = '300000000000000001';
const DEV = '300000000000000003';
const WARMUP = 5;
const CLICKS = 40;
const IN_PROCESS = 200;

const bench: Bench = async (report) => {
  const fake = await startDiscordFake();
  const alice = fakeUser('400000000000000001', 'alice');
  const olga = fakeUser('400000000000000009', 'olga');
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-bench-approvals-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    owners: { discord: [olga.id] },
    approvals: { waitSec: 0 },
    tools: { profile: 'coding', exec: { host: 'gateway' } },
    channels: { discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, guilds: { [GUILD]: { channels: { dev: { tools: { allow: ['*'] } } } } } } },
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {}, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  const warden = started.warden;
  await fake.frames.waitFor((f) => f.op === 2, 5_000, 'IDENTIFY');

  const buttons = (m: APIMessage) => (m.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + CLICKS; i++) {
    const from = fake.requests.records.length;
    fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> /exec echo bench-${i}` });
    await fake.requests.waitFor((r) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${DEV}/messages` && r.body?.components?.length > 0, 5_000, 'card');
    // The /exec reply says it is pending: the call is deferred before the click.
    await fake.requests.waitFor((r) => fake.requests.records.indexOf(r) >= from && String(r.body?.content ?? '').includes('is pending'), 5_000, 'pending reply');
    const card = fake.botMessagesIn(DEV).filter((m) => buttons(m).length > 0).at(-1)!;
    const customId = buttons(card).find((id) => decodeApprovalAction(id)?.decision === 'allow-once')!;
    const clickFrom = fake.requests.records.length;
    const clickedAt = performance.now();
    fake.click({ message: card, customId, user: olga });
    await fake.requests.waitFor(
      (r) => fake.requests.records.indexOf(r) >= clickFrom && r.method === 'POST' && r.body?.message_reference?.message_id === card.id && String(r.body?.content).includes(`bench-${i}`),
      5_000,
      'result under the card',
    );
    if (i >= WARMUP) samples.push(performance.now() - clickedAt);
    // Stay under discord.js's global limit of 50 requests a second, so the figure is not its queue.
    await sleep(120);
  }
  const e2e = summarize(samples);
  report({ name: 'approval click → result posted under the card (Discord, loopback) p50', value: fmtMs(e2e.p50), note: `p99 ${fmtMs(e2e.p99)}, ${samples.length} clicks, /exec echo` });
  await warden.stop();
  await fake.close();

  // Warden's share: decision → the post handed to the adapter, no platform in between.
  const opened = await openWardenStore({ dataDir: path.join(dir, 'bench-data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const store = opened.store;
  const config = parsed.value.config;
  const events = new EventBus();
  const approvals = new ApprovalService({ store, config, events });
  const executor = new GovernedToolExecutor(config, { config, baseDir: dir, store }, { approvals, events });
  let posted: (() => void) | undefined;
  const runner = new DeferredCallRunner({
    config,
    approvals,
    events,
    tools: executor,
    post: async () => posted?.(),
    followUp: () => true,
    transcripts: new DbTranscriptStore(store.db),
    accepting: () => true,
  });
  runner.start();
  const turn = { agentId: 'main', provider: 'discord', chat: 'channel' as const, guildId: GUILD, channelId: DEV, channelName: 'dev', senderId: alice.id, senderIsOwner: false, spawnDepth: 0 };
  const surface = await executor.surface(turn);
  const ids = surface.ok ? surface.tools.map((t) => t.id) : [];
  const inProcess: number[] = [];
  for (let i = 0; i < IN_PROCESS + 20; i++) {
    const pending = await executor.execute(
      { toolCallId: `b${i}`, tool: 'exec', args: { command: `echo bench-${i}` } },
      { sessionKey: `agent:main:discord:channel:${DEV}`, turn, signal: new AbortController().signal, surface: ids, via: 'command', deferApprovals: true },
    );
    const id = (pending.details as { approvalId?: string } | undefined)?.approvalId;
    if (!id) throw new Error(`the call was not deferred: ${JSON.stringify(pending.content)}`);
    const done = new Promise<void>((resolve) => (posted = resolve));
    const at = performance.now();
    await approvals.resolve(id, 'allow-once', { provider: 'discord', userId: olga.id, via: { kind: 'typed' } });
    await done;
    if (i >= 20) inProcess.push(performance.now() - at);
  }
  const own = summarize(inProcess);
  report({ name: '  of which Warden: decision → claim → chain → exec → post p50', value: fmtMs(own.p50), note: `p99 ${fmtMs(own.p99)}, ${inProcess.length} decisions` });
  await runner.stop();
  approvals.shutdown();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
};

export default bench;
