// Sandbox egress end to end: Warden as `warden start` runs it, the real discord.js adapter on
// the loopback Discord fake, a scripted model, the real sandbox and proxy. The model runs curl
// on a host off the network allowlist (ask: on-miss); the card "network: <host>:80 for `curl …`"
// is posted in the channel; after "Allow once" the command gets its answer and the model says so.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalAction } from '../../adapters/common/approval-card.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { parseConfig } from '../../src/config/index.js';
import { bwrapAvailable, sandboxNode } from '../../src/exec/sandbox.js';
import { metrics } from '../../src/ops/metrics.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startUpstreams, type Upstreams } from '../fakes/egress/upstreams.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';

const GUILD = '300000000000000001';
const DEV = '300000000000000003';
const alice = fakeUser('400000000000000001', 'alice');
const olga = fakeUser('400000000000000009', 'olga');

const up = await startUpstreams().catch((err: unknown) => ({ skip: `upstreams did not start: ${(err as Error).message}` }));
const skip = !bwrapAvailable() ? 'bubblewrap is not installed' : !sandboxNode() ? 'no node in a system directory' : 'skip' in up ? up.skip : undefined;
const upstreams = up as Upstreams;

const messagesOf = (r: FakeRequest) => r.body.messages as Array<{ role: string; content: unknown }>;
const textOf = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content));

describe.skipIf(skip !== undefined)('Discord: a network card for a sandboxed command', () => {
  let fake: DiscordFake;
  let model: FakeModelServer;
  let warden: RunningWarden | undefined;
  // An IP literal on a loopback alias that allowCidrs names: the running Warden resolves nothing.
  const command = () => `curl -sS http://${upstreams.address}/from-chat`;

  beforeAll(async () => {
    fake = await startDiscordFake();
    model = await startFakeOpenAI({
      respond: (r): FakeReply => {
        const last = messagesOf(r).at(-1)!;
        if (last.role === 'tool') return { kind: 'reply', text: `curl said: ${textOf(last.content).includes('hello from') ? 'hello' : 'nothing'}` };
        return { kind: 'reply', toolCalls: [{ name: 'exec', args: { command: command() } }] };
      },
    });
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
    await model?.close();
    if (!skip) await upstreams.close();
  });

  it('the card names host, port and command; after Allow once the command reaches the host and the model reports it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-egress-e2e-'));
    mkdirSync(path.join(dir, 'workspace'));
    const parsed = parseConfig({
      owners: { discord: [olga.id] },
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: {
        profile: 'coding',
        exec: { host: 'sandbox', allowlist: [{ pattern: '/usr/bin/curl' }], sandbox: { network: { mode: 'allowlist', allow: ['git.test'], ask: 'on-miss', allowCidrs: [upstreams.cidr] } } },
      },
      channels: { discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { dev: { tools: { allow: ['*'] } } } } } } },
      dataDir: path.join(dir, 'data'),
    });
    if (!parsed.ok) throw parsed.error;
    const from0 = Date.now();
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    warden = started.warden;
    await fake.frames.waitFor((f) => f.op === 2 && f.at >= from0, 5_000, 'IDENTIFY');

    const from = fake.requests.records.length;
    const after = (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from;
    fake.userMessage({ author: alice, channelId: DEV, content: `<@${fake.bot.id}> fetch it` });
    await fake.requests.waitFor((r) => after(r) && r.method === 'POST' && r.path === `/channels/${DEV}/messages` && Array.isArray(r.body.components) && r.body.components.length > 0, 15_000, 'network card');
    const buttons = (m: APIMessage) => (m.components ?? []).flatMap((row: any) => row.components ?? []).map((b: any) => b.custom_id as string);
    const card = fake.botMessagesIn(DEV).filter((m) => buttons(m).length > 0).at(-1)!;
    const embed = JSON.stringify(card.embeds);
    expect(embed).toContain(`network: ${upstreams.address}:80 for \`${command()}\``);
    expect(embed).toContain('is not on tools.exec.sandbox.network.allow');
    expect(buttons(card).map((id) => decodeApprovalAction(id)?.decision).filter(Boolean)).toEqual(['allow-once', 'allow-always', 'deny']);
    expect(upstreams.seen.some((s) => s.url === '/from-chat')).toBe(false);

    fake.click({ message: card, customId: buttons(card).find((id) => decodeApprovalAction(id)?.decision === 'allow-once')!, user: olga });
    await fake.requests.waitFor((r) => after(r) && r.method === 'POST' && r.path === `/channels/${DEV}/messages` && typeof r.body.content === 'string' && r.body.content.includes('curl said: hello'), 20_000, 'the model reporting the answer');
    expect(upstreams.seen.filter((s) => s.url === '/from-chat')).toHaveLength(1);
    // /metrics counts it by decision.
    expect(await metrics.registry.getSingleMetricAsString('warden_sandbox_egress_total')).toMatch(/warden_sandbox_egress_total\{decision="asked-allowed"\} [1-9]/);
  }, 60_000);
});
