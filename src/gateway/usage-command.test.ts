// `/usage` over a real store: yours, this channel's, everyone's for owners only; a markdown table
// in the web chat, a fixed-width one in a code block elsewhere; costs with their currency and source.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openWardenStore } from '../app/migrations.js';
import { channelTurn } from '../app/agent-testing.js';
import { parseConfig } from '../config/index.js';
import type { TurnContext } from '../policy/context.js';
import { usageReport } from '../usage/report.js';
import { UsageService } from '../usage/service.js';
import { UsageStore } from '../usage/store.js';
import type { UsageAttribution } from '../usage/types.js';
import type { Route } from './router.js';
import { runUsageCommand, type UsageCommandDeps } from './usage-command.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const NOW = Date.UTC(2026, 11, 6, 12);

async function setup() {
  const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-usage-cmd-')) });
  if (!opened.ok) throw new Error(opened.error.message);
  closers.push(() => opened.store.close());
  const parsed = parseConfig({ budgets: [{ scope: 'sender', per: 'day', usd: 1 }] });
  if (!parsed.ok) throw parsed.error;
  const config = parsed.value.config;
  const store = new UsageStore(opened.store.db);
  const usage = new UsageService({ store, config: () => config, now: () => NOW });
  const who = (senderId: string, senderName: string, channelId = 'c1'): UsageAttribution => ({ agentId: 'main', platform: 'discord', senderId, senderName, channelId, guildId: 'g1', purpose: 'turn' });
  const insert = (a: UsageAttribution, input: number, costNano: number | undefined, model = 'claude-x') =>
    store.insert({ at: NOW - 1000, provider: 'anthropic', model, attribution: a, usage: { inputTokens: input, outputTokens: 10 }, costNano, priceSource: costNano === undefined ? undefined : 'built-in table of 2025-11-01' });
  await insert(who('u1', 'alice'), 100, 5_000_000);
  await insert(who('u1', 'alice'), 200, 7_000_000, 'local-y');
  await insert(who('u2', 'bob'), 300, 30_000_000);
  await insert(who('u3', 'carol', 'c2'), 50, undefined);
  const deps: UsageCommandDeps = { report: (f) => usageReport(opened.store.db, f), budgets: usage, timeZone: () => 'UTC' };
  return { deps };
}

const route = (over: Partial<TurnContext> = {}): Route => {
  const context = channelTurn({ senderId: 'u1', senderName: 'alice', ...over });
  return { agentId: 'main', sessionKey: 'agent:main:discord:channel:c1', context, replyTo: { provider: context.provider as 'discord', channelId: 'c1' }, text: '/usage' };
};

describe('/usage', () => {
  it('yours: this month by model, with the budgets that apply to you', async () => {
    const { deps } = await setup();
    const text = await runUsageCommand('', route(), deps, NOW);
    expect(text).toContain('Your usage this month (2026-12, UTC)');
    expect(text).toMatch(/anthropic\/claude-x\s+1\s+100\s+0\s+10\s+0\s+\$0\.005000 USD/);
    expect(text).toMatch(/total\s+2\s+300\s+0\s+20\s+0\s+\$0\.0120 USD/);
    expect(text).not.toContain('bob');
    expect(text).toContain('prices: built-in table of 2025-11-01');
    expect(text).toContain('Budget (sender): $0.0000 USD of $1.0000 USD spent; resets 2026-12-07 00:00 UTC.');
    expect(text.startsWith('```\n')).toBe(true);
  });

  it('this channel’s: its senders, most expensive first; another channel’s usage is not in it', async () => {
    const { deps } = await setup();
    const text = await runUsageCommand('channel', route(), deps, NOW);
    const lines = text.split('\n');
    const bob = lines.findIndex((l) => l.startsWith('bob (discord:u2)'));
    const alice = lines.findIndex((l) => l.startsWith('alice (discord:u1)'));
    expect(bob).toBeGreaterThan(0);
    expect(alice).toBeGreaterThan(bob);
    expect(text).not.toContain('carol');
  });

  it('everyone’s is for owners; an unknown price is said so, never $0', async () => {
    const { deps } = await setup();
    expect(await runUsageCommand('all', route(), deps, NOW)).toBe('/usage all is reserved for owners. Try /usage or /usage channel.');
    const text = await runUsageCommand('all', route({ senderIsOwner: true }), deps, NOW);
    expect(text).toMatch(/carol \(discord:u3\)\s+1\s+50\s+0\s+10\s+0\s+price unknown/);
    expect(text).toContain('$0.0420 USD + 1 call price unknown');
  });

  it('renders a markdown table in the web chat', async () => {
    const { deps } = await setup();
    const text = await runUsageCommand('me', route({ provider: 'web', senderId: 'u1' }), deps, NOW);
    // Web senders are their own: nothing recorded for web:u1.
    expect(text).toContain('| model | calls | input | cached | output | reasoning | cost |');
    expect(text).toContain('| **total** | 0 | 0 | 0 | 0 | 0 | $0.0000 USD |');
  });

  it('says how to use it', async () => {
    const { deps } = await setup();
    expect(await runUsageCommand('yesterday', route(), deps, NOW)).toBe('usage: /usage [me | channel | all]  (all: owners only)');
  });
});
