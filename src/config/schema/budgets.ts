import * as z from 'zod';
import { lazySchema, once } from './lazy.js';

export const BUDGET_SCOPES = ['sender', 'channel', 'guild', 'agent', 'global'] as const;
export const BUDGET_PERIODS = ['day', 'week', 'month'] as const;

/** A valid IANA zone name, as `Intl` knows it on this Node. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * One budget rule: what `scope` a counter belongs to (each sender, channel, guild/team, agent,
 * or everything), which of them `match` picks (`*` or absent: each one separately), the period
 * it resets on, its cap in US dollars or in tokens (exactly one), and what happens at the cap.
 */
export const budgetRule = lazySchema(() => z
  .strictObject({
    scope: z.enum(BUDGET_SCOPES),
    /** An id of the scope (`discord:123` or `123` for a sender, a channel, guild/team or agent id); `*` or absent: each one. */
    match: z.string().min(1).optional(),
    per: z.enum(BUDGET_PERIODS),
    usd: z.number().positive().optional(),
    tokens: z.number().int().positive().optional(),
    /** `refuse` (default): the sender is told what is spent and when it resets. `ask`: also a card to raise it for this period. */
    action: z.enum(['refuse', 'ask']).default('refuse'),
  })
  .superRefine((rule, ctx) => {
    if ((rule.usd === undefined) === (rule.tokens === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['usd'], message: 'a budget sets exactly one of usd or tokens' });
    }
    if (rule.scope === 'global' && rule.match !== undefined && rule.match !== '*') {
      ctx.addIssue({ code: 'custom', path: ['match'], message: 'a global budget has nothing to match' });
    }
  }));
export type BudgetRule = z.infer<typeof budgetRule>;

const timeZone = once(() => z.string().refine(isTimeZone, { message: 'not a time zone this Node knows (an IANA name such as "Europe/Berlin" or "UTC")' }));

/**
 * `budgets`: a list of rules (periods in UTC), or `{ timeZone(), rules }` when periods should
 * turn over at midnight somewhere else. A list is read as `rules` (its problems are reported
 * under `budgets.rules`), so both parse to the object form with errors naming the key.
 */
export const budgetsConfig = z
  .preprocess(
    (raw) => (Array.isArray(raw) ? { rules: raw } : raw),
    lazySchema(() => z.strictObject({ timeZone: timeZone().default('UTC'), rules: z.array(budgetRule).default([]) })),
  )
  .default({ timeZone: 'UTC', rules: [] });
export type BudgetsConfig = z.infer<typeof budgetsConfig>;
