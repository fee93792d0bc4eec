// Usage accounting and budgets end to end: the turn loop through the real SDKs against the
// loopback fakes of each model API, the store, the approvals service and `warden usage`.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from '../../src/agent/index.js';
import { channelTurn, createHarness, FunctionToolExecutor, text, type Harness } from '../../src/app/agent-testing.js';
import { createUsageService, RAISE_TOOL } from '../../src/app/usage.js';
import { ApprovalService } from '../../src/approvals/service.js';
import type { CliIO } from '../../src/cli/args.js';
import { main } from '../../src/cli.js';
import { EventBus } from '../../src/events/events.js';
import { createModelRegistry } from '../../src/models/registry.js';
import { metrics } from '../../src/ops/metrics.js';
import { metricValue } from '../../src/ops/testing.js';
import { startFakeAnthropic } from '../fakes/models/anthropic-fake.js';
import { startFakeGemini } from '../fakes/models/gemini-fake.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelOptions, FakeModelServer, ReportedUsage } from '../fakes/models/server.js';

const KEY = 'agent:main:discord:channel:c1';
/** USD per million tokens, as OpenClaw's `cost` keys say it. */
const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

const apis: Array<{ api: 'anthropic' | 'openai' | 'gemini'; provider: string; start: (o?: FakeModelOptions) => Promise<FakeModelServer> }> = [
  { api: 'anthropic', provider: 'anthropic', start: startFakeAnthropic },
  { api: 'openai', provider: 'ollama', start: startFakeOpenAI },
  { api: 'gemini', provider: 'gemini', start: startFakeGemini },
];

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** Nano-dollars of one reported usage at PRICE, worked out here from the price (not by the code under test). */
function expectedNano(u: ReportedUsage): number {
  const fresh = u.inputTokens - u.cachedInputTokens - u.cacheWriteTokens;
  return Math.round(fresh * PRICE.input * 1000) + Math.round(u.cachedInputTokens * PRICE.cacheRead * 1000) + Math.round(u.cacheWriteTokens * PRICE.cacheWrite * 1000) + Math.round(u.outputTokens * PRICE.output * 1000);
}

async function setup(api: (typeof apis)[number], fake: FakeModelServer, extra: Record<string, unknown> = {}) {
  const config = {
    owners: { discord: ['owner-1'] },
    models: {
      default: `${api.provider}/model-x`,
      providers: { [api.provider]: { api: api.api, baseUrl: fake.url, models: [{ id: 'model-x', cost: PRICE }] } },
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
    },
    ...extra,
  };
  const h: Harness = await createHarness(config);
  closers.push(() => h.cleanup());
  // The CLI reads the same store through the same config.
  writeFileSync(path.join(h.dir, 'warden.config.yaml'), JSON.stringify({ ...config, dataDir: '.' }));
  const approvals = new ApprovalService({ store: h.store, config: h.config, events: new EventBus(), pollMs: 10 });
  closers.push(() => approvals.shutdown());
  const usage = createUsageService(h.store, () => h.config, approvals);
  const models = createModelRegistry(h.config, { ANTHROPIC_API_KEY: 'test-key', GEMINI_API_KEY: 'test-key' });
  return { h, approvals, usage, models };
}

async function cli(dir: string, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: (t) => void (stdout += `${t}\n`), stderr: (t) => void (stderr += `${t}\n`), cwd: dir, env: {} };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

const turnOf = (sender = 'u1') => channelTurn({ senderId: sender, senderName: sender === 'u1' ? 'alice' : 'bob' });

describe.each(apis)('usage through the $api API', (api) => {
  it('`warden usage --json` is the exact sum of the tokens the fake reported, and their cost at the configured price', async () => {
    const fake = await api.start({
      script: [
        { kind: 'reply', text: 'Looking.', toolCalls: [{ id: 'call-1', name: 'read', args: { path: 'a.md' } }], usage: { cachedInputTokens: 7, reasoningTokens: 11, cacheWriteTokens: 5 } },
        { kind: 'reply', text: 'It says hello.', usage: { cachedInputTokens: 3 } },
        { kind: 'reply', text: 'Second question answered.', usage: { reasoningTokens: 2 } },
      ],
    });
    closers.push(() => fake.close());
    const { h, usage, models } = await setup(api, fake);
    const tools = new FunctionToolExecutor({ read: { parameters: { type: 'object', properties: { path: { type: 'string' } } }, run: () => text('hello') } });
    const runtime = createAgentRuntime({ ...h.deps(undefined as never, tools), models, usage });
    // Streamed to the user (text deltas forwarded) and not: both paths record.
    const streamed = await runtime.runTurn({ sessionKey: KEY, turn: turnOf('u1'), input: { text: 'read a.md' }, signal: new AbortController().signal, onTextDelta: () => {} });
    const quiet = await runtime.runTurn({ sessionKey: KEY, turn: turnOf('u2'), input: { text: 'and now?' }, signal: new AbortController().signal });
    expect([streamed.status, quiet.status]).toEqual(['completed', 'completed']);
    expect(fake.requests).toHaveLength(3);

    const reported = fake.requests.map((r) => r.reported!);
    const sum = (k: keyof ReportedUsage) => reported.reduce((n, u) => n + u[k], 0);
    const out = await cli(h.dir, ['usage', '--json', '--since', '1h', '--by', 'sender']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const report = JSON.parse(out.stdout);
    const costNano = reported.reduce((n, u) => n + expectedNano(u), 0);
    expect(report.totals).toEqual({
      calls: 3,
      inputTokens: sum('inputTokens'),
      outputTokens: sum('outputTokens'),
      cachedInputTokens: sum('cachedInputTokens'),
      cacheWriteTokens: sum('cacheWriteTokens'),
      reasoningTokens: sum('reasoningTokens'),
      costNano,
      costUsd: costNano / 1e9,
      unpricedCalls: 0,
    });
    expect(report.currency).toBe('USD');
    expect(report.priceSources).toEqual([`models.providers.${api.provider}.models[model-x].cost`]);
    // By sender: alice's turn made the first two calls, bob's the third.
    expect(report.rows.map((r: { key: string; name?: string; calls: number; costNano: number }) => [r.key, r.name, r.calls, r.costNano])).toEqual(
      [
        ['discord:u1', 'alice', 2, expectedNano(reported[0]!) + expectedNano(reported[1]!)],
        ['discord:u2', 'bob', 1, expectedNano(reported[2]!)],
      ].sort((a, b) => (b[3] as number) - (a[3] as number)),
    );
    // The providers' subsets came through their own fields.
    expect(sum('cachedInputTokens')).toBe(10);
    if (api.api !== 'anthropic') expect(sum('reasoningTokens')).toBe(13);
    // /metrics: the same tokens and cost, by agent, provider and model.
    const scrape = await metrics.registry.metrics();
    const labels = { agent: 'main', provider: api.provider, model: 'model-x' };
    expect(metricValue(scrape, 'warden_model_tokens_total', { ...labels, kind: 'input' })).toBe(sum('inputTokens'));
    expect(metricValue(scrape, 'warden_model_tokens_total', { ...labels, kind: 'output' })).toBe(sum('outputTokens'));
    expect(metricValue(scrape, 'warden_model_tokens_total', { ...labels, kind: 'cached' })).toBe(sum('cachedInputTokens'));
    expect(metricValue(scrape, 'warden_model_cost_usd_total', labels)).toBeCloseTo(costNano / 1e9, 12);
    const csv = await cli(h.dir, ['usage', '--csv', '--since', '1h', '--by', 'model']);
    expect(csv.stdout.split('\n')[1]).toBe(`${api.provider}/model-x,3,${sum('inputTokens')},${sum('cachedInputTokens')},${sum('cacheWriteTokens')},${sum('outputTokens')},${sum('reasoningTokens')},${(costNano / 1e9).toFixed(9)},0`);
  });
});

describe('budgets', () => {
  const api = apis[0]!;
  const senderBudget = (action: 'refuse' | 'ask') => ({ budgets: { timeZone: 'Europe/Berlin', rules: [{ scope: 'sender', per: 'day', usd: 0.01, action }] } });

  it('refuses the turn once a sender spent $0.01 today: no model request is made, the reply says what is spent and when it resets; an approver raises it for today', async () => {
    // Each call costs over a cent at $3 / $15 per million: the first turn crosses the cap (by at most that one call).
    const fake = await api.start({ respond: () => ({ kind: 'reply', text: 'x'.repeat(3_000) }) });
    closers.push(() => fake.close());
    const { h, approvals, usage, models } = await setup(api, fake, senderBudget('ask'));
    const runtime = createAgentRuntime({ ...h.deps(undefined as never, new FunctionToolExecutor({})), models, usage });
    const turn = (sender = 'u1') => runtime.runTurn({ sessionKey: KEY, turn: turnOf(sender), input: { text: 'hi' }, signal: new AbortController().signal });

    expect((await turn()).status).toBe('completed');
    expect(fake.requests).toHaveLength(1);
    const spent = expectedNano(fake.requests[0]!.reported!);
    expect(spent).toBeGreaterThan(10_000_000);

    const refused = await turn();
    expect(fake.requests).toHaveLength(1);
    expect(refused.status).toBe('failed');
    if (refused.status !== 'failed') return;
    expect(refused.error.kind).toBe('budget');
    expect(refused.reply).toContain(`Your budget of $0.0100 USD per day is reached: $${(spent / 1e9).toFixed(spent / 1e9 < 0.01 ? 6 : 4)} USD spent.`);
    expect(refused.reply).toMatch(/It resets at \d{4}-\d{2}-\d{2} 00:00 Europe\/Berlin\./);
    // Another sender's budget is their own.
    expect((await turn('u2')).status).toBe('completed');
    expect(fake.requests).toHaveLength(2);

    // `ask`: one card to the approvers, offered as allow-once ("raise for today") or deny.
    const pending = await approvals.list();
    expect(pending).toHaveLength(1);
    const card = pending[0]!;
    expect(card).toMatchObject({ tool: RAISE_TOOL, allowedDecisions: ['allow-once', 'deny'], requesterId: 'u1' });
    expect(refused.reply).toContain(`(approval ${card.id})`);
    // Asking again while the card waits points to the same card.
    expect((await turn()).reply).toContain(`(approval ${card.id})`);
    expect(await approvals.list()).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
    // The sender is no approver; the owner is.
    expect((await approvals.resolve(card.id, 'allow-once', { provider: 'discord', userId: 'u1', via: { kind: 'typed' } })).kind).toBe('not-approver');
    expect((await approvals.resolve(card.id, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } })).kind).toBe('resolved');

    const after = await turn();
    expect(after.reply).toBe('x'.repeat(3_000));
    expect(fake.requests).toHaveLength(3);
  });

  it('refuse: no card, only the answer', async () => {
    const fake = await api.start({ respond: () => ({ kind: 'reply', text: 'x'.repeat(4_000) }) });
    closers.push(() => fake.close());
    const { h, approvals, usage, models } = await setup(api, fake, senderBudget('refuse'));
    const runtime = createAgentRuntime({ ...h.deps(undefined as never, new FunctionToolExecutor({})), models, usage });
    const turn = () => runtime.runTurn({ sessionKey: KEY, turn: turnOf(), input: { text: 'hi' }, signal: new AbortController().signal });
    await turn();
    const refused = await turn();
    expect(refused.reply).toMatch(/^⛔ Your budget of \$0\.0100 USD per day is reached: .* It resets at .*\.$/);
    expect(await approvals.list()).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it('stops a tool loop at the cap mid-turn, with a message after what the model said so far', async () => {
    // Every answer asks for another tool call: without a cap the loop would run to maxToolRounds.
    const fake = await api.start({ respond: (r) => ({ kind: 'reply', text: `step ${r.body.messages.length}`, toolCalls: [{ name: 'read', args: { path: 'a.md' } }] }) });
    closers.push(() => fake.close());
    const { h, usage, models } = await setup(api, fake, { budgets: [{ scope: 'channel', match: 'c1', per: 'day', tokens: 1_500 }] });
    const tools = new FunctionToolExecutor({ read: { parameters: { type: 'object', properties: { path: { type: 'string' } } }, run: () => text('y'.repeat(400)) } });
    const runtime = createAgentRuntime({ ...h.deps(undefined as never, tools), models, usage });
    const outcome = await runtime.runTurn({ sessionKey: KEY, turn: turnOf(), input: { text: 'go' }, signal: new AbortController().signal });
    expect(outcome.status).toBe('failed');
    if (outcome.status !== 'failed') return;
    expect(outcome.error.kind).toBe('budget');
    const made = fake.requests.length;
    expect(made).toBeGreaterThanOrEqual(2);
    expect(made).toBeLessThan(h.config.agents.defaults.maxToolRounds);
    // Every call but the last was admitted below the cap: the cap was crossed by the last call only.
    const tokens = fake.requests.map((r) => r.reported!.inputTokens + r.reported!.outputTokens);
    expect(tokens.slice(0, -1).reduce((a, b) => a + b, 0)).toBeLessThan(1_500);
    expect(tools.calls).toHaveLength(made);
    expect(outcome.reply).toMatch(new RegExp(`^step \\d+\\n\\n⛔ This channel’s \\(c1\\) budget of 1500 tokens per day is reached: \\d+ tokens spent\\. It resets at `));
  });
});
