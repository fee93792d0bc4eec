import type { Usage } from '../models/types.js';
import type { Price } from './prices.js';

/**
 * Costs are kept as integer nano-dollars (1e-9 USD): sums over thousands of calls stay exact,
 * and a price in dollars per million tokens with up to three decimals ($0.075) makes each
 * token's cost an integer number of them.
 */
export const NANO_PER_USD = 1_000_000_000;

/** Nano-dollars for `tokens` at `perMillion` USD per million: tokens × perMillion × 1000. */
const nano = (tokens: number, perMillion: number): number => Math.round(tokens * perMillion * 1000);

/** What one call cost at `price`, in nano-dollars: uncached input, cache reads and writes, output (reasoning included). */
export function costNano(usage: Usage, price: Price): number {
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const fresh = Math.max(0, usage.inputTokens - cached - written);
  return (
    nano(fresh, price.input) +
    nano(cached, price.cacheRead ?? price.input) +
    nano(written, price.cacheWrite ?? price.input) +
    nano(usage.outputTokens, price.output)
  );
}

export const usdOf = (nanoUsd: number): number => nanoUsd / NANO_PER_USD;
export const nanoOfUsd = (usd: number): number => Math.round(usd * NANO_PER_USD);

/** `$0.0123` with enough digits to tell small amounts apart; always with its currency. */
export function formatUsd(nanoUsd: number): string {
  const usd = usdOf(nanoUsd);
  const digits = usd !== 0 && Math.abs(usd) < 0.01 ? 6 : usd < 100 ? 4 : 2;
  return `$${usd.toFixed(digits)} USD`;
}
