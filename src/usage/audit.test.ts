import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { auditBudgets } from './audit.js';

const MODEL = { models: { default: 'anthropic/claude-sonnet-4-5' } };
const DISCORD = { channels: { discord: { token: 'x' } } };

describe('auditBudgets', () => {
  it.each([
    ['Discord with a model and no budget', { ...MODEL, ...DISCORD }, ['usage.no-budget: discord is reachable beyond this machine and no budget is set: model spend has no cap']],
    ['the web chat beyond loopback', { ...MODEL, channels: { web: { host: '0.0.0.0', token: 'long-enough-token-for-the-web-chat' } } }, ['usage.no-budget: web (0.0.0.0) is reachable beyond this machine and no budget is set: model spend has no cap']],
    ['the web chat on loopback only', { ...MODEL }, []],
    ['Discord with a budget', { ...MODEL, ...DISCORD, budgets: [{ scope: 'global', per: 'month', usd: 100 }] }, []],
    ['Discord without a model (commands only)', { ...DISCORD }, []],
  ])('%s', (_n, raw, expected) => {
    const parsed = parseConfig(raw);
    if (!parsed.ok) throw parsed.error;
    expect(auditBudgets(parsed.value.config).map((f) => `${f.id}: ${f.message}`)).toEqual(expected);
  });
});
