// The pure parts of usage and budgets: prices, costs, periods in a time zone, which counters a
// call is charged to, and the budgets config's two forms.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { budgetLoosening, countersFor } from './budgets.js';
import { costNano, formatUsd } from './cost.js';
import { describeReset, periodAt } from './periods.js';
import { BUILT_IN_PRICES_DATE, priceFor } from './prices.js';
import type { UsageAttribution } from './types.js';

const config = (raw: object) => {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
};

describe('prices', () => {
  const cfg = config({
    models: {
      providers: {
        anthropic: { models: [{ id: 'claude-sonnet-4-5', cost: { input: 2, output: 10 } }] },
        ollama: { api: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', models: [{ id: 'llama3', cost: { input: 0, output: 0 } }, { id: 'qwen' }] },
        proxy: { api: 'openai', baseUrl: 'https://proxy.example/v1' },
        openai: { baseUrl: 'https://gateway.example/v1' },
      },
    },
  });
  it.each([
    ['config cost wins over the table', 'anthropic', 'claude-sonnet-4-5', { input: 2, output: 10, source: 'models.providers.anthropic.models[claude-sonnet-4-5].cost' }],
    ['built-in table, with its date', 'anthropic', 'claude-haiku-4-5', { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25, source: `built-in table of ${BUILT_IN_PRICES_DATE}` }],
    ['a dated snapshot id is its alias', 'anthropic', 'claude-opus-4-1-20250805', { input: 15, output: 75 }],
    ['gemini under the google name', 'google', 'gemini-2.5-flash', { input: 0.3, output: 2.5 }],
    ['a free local model priced 0 in the config', 'ollama', 'llama3', { input: 0, output: 0 }],
  ])('%s', (_n, provider, model, expected) => {
    expect(priceFor(cfg, provider, model)).toMatchObject(expected);
  });
  it.each([
    ['a listed model without cost', 'ollama', 'qwen'],
    ['an unknown model of a known provider', 'anthropic', 'claude-9'],
    ['a proxy with a table model name', 'proxy', 'gpt-4o'],
    ['the official name at another baseUrl', 'openai', 'gpt-4o'],
  ])('unknown: %s', (_n, provider, model) => {
    expect(priceFor(cfg, provider, model)).toBeUndefined();
  });
});

describe('cost', () => {
  it.each([
    ['input and output', { inputTokens: 1_000_000, outputTokens: 1_000_000 }, 18 * 1e9],
    ['cache reads at their price, cache writes at theirs', { inputTokens: 1000, outputTokens: 0, cachedInputTokens: 600, cacheWriteTokens: 100 }, 300 * 3000 + 600 * 300 + 100 * 3750],
    ['reasoning is output', { inputTokens: 0, outputTokens: 10, reasoningTokens: 8 }, 10 * 15_000],
  ])('%s', (_n, usage, nano) => {
    expect(costNano(usage, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, source: 't' })).toBe(nano);
  });
  it('a cache price not set is the input price', () => {
    expect(costNano({ inputTokens: 10, outputTokens: 0, cachedInputTokens: 10 }, { input: 2, output: 0, source: 't' })).toBe(20_000);
  });
  it.each([
    [10_000_000, '$0.0100 USD'],
    [1_234, '$0.000001 USD'],
    [12_345_678_900, '$12.3457 USD'],
    [0, '$0.0000 USD'],
  ])('%d nano-dollars read %s', (n, text) => {
    expect(formatUsd(n)).toBe(text);
  });
});

describe('periods', () => {
  it.each([
    ['a UTC day', Date.UTC(2026, 11, 6, 13), 'day', 'UTC', '2026-12-06', Date.UTC(2026, 11, 6), Date.UTC(2026, 11, 7)],
    ['Berlin in winter (UTC+1): 23:30 UTC is already tomorrow', Date.UTC(2026, 11, 6, 23, 30), 'day', 'Europe/Berlin', '2026-12-07', Date.UTC(2026, 11, 6, 23), Date.UTC(2026, 11, 7, 23)],
    ['New York the day summer time ends (25 hours)', Date.UTC(2026, 10, 1, 12), 'day', 'America/New_York', '2026-11-01', Date.UTC(2026, 10, 1, 4), Date.UTC(2026, 10, 2, 5)],
    ['an ISO week from Monday', Date.UTC(2026, 11, 6, 12), 'week', 'UTC', '2026-11-30/week', Date.UTC(2026, 10, 30), Date.UTC(2026, 11, 7)],
    ['a month across the year end', Date.UTC(2026, 11, 31, 12), 'month', 'UTC', '2026-12', Date.UTC(2026, 11, 1), Date.UTC(2027, 0, 1)],
    ['Tokyo month starts at 15:00 UTC the day before', Date.UTC(2026, 10, 30, 16), 'month', 'Asia/Tokyo', '2026-12', Date.UTC(2026, 10, 30, 15), Date.UTC(2026, 11, 31, 15)],
  ] as const)('%s', (_n, now, per, zone, key, start, end) => {
    expect(periodAt(now, per, zone)).toEqual({ key, start, end });
  });
  it('says when a period resets in the zone it counts in', () => {
    expect(describeReset(Date.UTC(2026, 11, 6, 23), 'Europe/Berlin')).toBe('2026-12-07 00:00 Europe/Berlin');
  });
});

describe('countersFor', () => {
  const at = Date.UTC(2026, 11, 6, 12);
  const call: UsageAttribution = { agentId: 'main', platform: 'discord', senderId: 'u1', channelId: 'c1', guildId: 'g1', purpose: 'turn' };
  const budgets = (rules: object[]) => config({ budgets: rules }).budgets;
  it.each([
    ['each sender (no match)', [{ scope: 'sender', per: 'day', usd: 1 }], call, ['sender|discord:u1|day|2026-12-06|usd']],
    ['a sender by bare id', [{ scope: 'sender', match: 'u1', per: 'day', usd: 1 }], call, ['sender|discord:u1|day|2026-12-06|usd']],
    ['a sender by platform:id', [{ scope: 'sender', match: 'slack:u1', per: 'day', usd: 1 }], call, []],
    ['another channel', [{ scope: 'channel', match: 'c2', per: 'day', tokens: 5 }], call, []],
    ['guild, agent and global together', [{ scope: 'guild', per: 'month', usd: 1 }, { scope: 'agent', match: 'main', per: 'week', tokens: 9 }, { scope: 'global', per: 'day', usd: 5 }], call, ['guild|g1|month|2026-12|usd', 'agent|main|week|2026-11-30/week|tokens', 'global|*|day|2026-12-06|usd']],
    ['no sender (a cron run): sender rules do not apply', [{ scope: 'sender', per: 'day', usd: 1 }], { agentId: 'main', purpose: 'turn' }, []],
  ] as const)('%s', (_n, rules, attribution, keys) => {
    expect(countersFor(budgets([...rules]), attribution as UsageAttribution, at).map((c) => c.key)).toEqual(keys);
  });
  it('two rules on one counter: the smaller cap holds, and refuse beats ask on a tie', () => {
    const [c] = countersFor(budgets([{ scope: 'sender', per: 'day', usd: 2, action: 'ask' }, { scope: 'sender', per: 'day', usd: 1, action: 'ask' }, { scope: 'sender', match: 'u1', per: 'day', usd: 1 }]), call, at);
    expect(c).toMatchObject({ cap: 1e9, action: 'refuse', ruleIndex: 2 });
  });
});

describe('budgets config', () => {
  it('takes a list (periods in UTC) or { timeZone, rules }', () => {
    expect(config({ budgets: [{ scope: 'global', per: 'day', usd: 3 }] }).budgets).toEqual({ timeZone: 'UTC', rules: [{ scope: 'global', per: 'day', usd: 3, action: 'refuse' }] });
    expect(config({ budgets: { timeZone: 'Europe/Berlin', rules: [{ scope: 'sender', per: 'week', tokens: 10, action: 'ask' }] } }).budgets.timeZone).toBe('Europe/Berlin');
    expect(config({}).budgets).toEqual({ timeZone: 'UTC', rules: [] });
  });
  it.each([
    [{ budgets: [{ scope: 'sender', per: 'day' }] }, 'budgets'],
    [{ budgets: [{ scope: 'sender', per: 'day', usd: 1, tokens: 5 }] }, 'exactly one of usd or tokens'],
    [{ budgets: [{ scope: 'sender', per: 'day', usd: -1 }] }, 'budgets'],
    [{ budgets: [{ scope: 'team', per: 'day', usd: 1 }] }, 'budgets'],
    [{ budgets: [{ scope: 'global', match: 'x', per: 'day', usd: 1 }] }, 'nothing to match'],
    [{ budgets: { timeZone: 'Mars/Olympus', rules: [] } }, 'time zone'],
  ])('refuses %j', (raw, words) => {
    const parsed = parseConfig(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.message).toContain(words);
  });
});

describe('budgetLoosening (what a config patch judge calls widening)', () => {
  const b = (raw: unknown) => config({ budgets: raw }).budgets;
  const SENDER = { scope: 'sender', per: 'day', usd: 1 };
  it.each([
    ['removed', [SENDER], [], true],
    ['cap raised', [SENDER], [{ ...SENDER, usd: 2 }], true],
    ['refuse turned ask', [SENDER], [{ ...SENDER, action: 'ask' }], true],
    ['each sender narrowed to one', [SENDER], [{ ...SENDER, match: 'u1' }], true],
    ['per day moved to per week', [SENDER], [{ ...SENDER, per: 'week' }], true],
    ['usd moved to tokens', [SENDER], [{ scope: 'sender', per: 'day', tokens: 1 }], true],
    ['time zone moved', { timeZone: 'UTC', rules: [SENDER] }, { timeZone: 'Asia/Tokyo', rules: [SENDER] }, true],
    ['cap lowered', [SENDER], [{ ...SENDER, usd: 0.5 }], false],
    ['ask turned refuse', [{ ...SENDER, action: 'ask' }], [SENDER], false],
    ['one sender widened to each', [{ ...SENDER, match: 'u1' }], [SENDER], false],
    ['a rule added', [SENDER], [SENDER, { scope: 'global', per: 'month', usd: 100 }], false],
    ['first budget set', [], [SENDER], false],
  ] as const)('%s', (_n, before, after, widens) => {
    expect(budgetLoosening(b(before), b(after)).length > 0).toBe(widens);
  });
});

describe('config patches (the control plane judge)', () => {
  const TEAM = { models: { default: 'anthropic/claude-sonnet-4-5' }, budgets: [{ scope: 'sender', per: 'day', usd: 1 }] };
  it.each([
    ['a cap raised', { budgets: [{ scope: 'sender', per: 'day', usd: 5 }] }, true],
    ['budgets removed', { budgets: [] }, true],
    ['a model’s price lowered', { models: { default: 'anthropic/claude-sonnet-4-5', providers: { anthropic: { models: [{ id: 'claude-sonnet-4-5', cost: { input: 0, output: 0 } }] } } } }, true],
    ['a cap lowered', { budgets: [{ scope: 'sender', per: 'day', usd: 0.5 }] }, false],
    ['a global cap added', { budgets: [{ scope: 'sender', per: 'day', usd: 1 }, { scope: 'global', per: 'month', usd: 50 }] }, false],
  ])('%s', async (_n, patch, widens) => {
    const { classifyConfigChange } = await import('../control/widening.js');
    const result = await classifyConfigChange(config(TEAM), config({ ...TEAM, ...patch }));
    expect(result.widening.length > 0).toBe(widens);
  });
});
