import type { BudgetRule, BudgetsConfig } from '../config/index.js';
import { nanoOfUsd } from './cost.js';
import { periodAt, type PeriodWindow } from './periods.js';
import type { CounterUnit, UsageAttribution } from './types.js';

/**
 * Which budget counters a call is charged to, and their caps: a pure function of the rules, the
 * call's attribution and the time, the one place budgets are matched (the turn's check, `/usage`
 * and `warden usage` all read through it).
 */
export interface CounterSpec {
  /** The stored counter's name: scope, subject, period and unit. Rules alike share it. */
  key: string;
  scope: BudgetRule['scope'];
  /** Who the counter is for (`discord:U1`, a channel id, `*` for global). */
  subject: string;
  unit: CounterUnit;
  /** In nano-dollars for usd, tokens for tokens: the smallest cap of the rules sharing the counter. */
  cap: number;
  window: PeriodWindow;
  /** The rule that set the cap (its index in `budgets.rules`). */
  ruleIndex: number;
  action: BudgetRule['action'];
}

/** The subject a scope names for this call, or undefined when the call has none (no sender in a cron run). */
export function subjectOf(scope: BudgetRule['scope'], a: UsageAttribution): string | undefined {
  switch (scope) {
    case 'sender':
      return a.senderId !== undefined ? `${a.platform ?? 'unknown'}:${a.senderId}` : undefined;
    case 'channel':
      return a.channelId;
    case 'guild':
      return a.guildId;
    case 'agent':
      return a.agentId;
    case 'global':
      return '*';
  }
}

/** `match` absent or `*`: every subject. A sender may be matched as `123` (any platform) or `discord:123`. */
function matches(rule: BudgetRule, subject: string): boolean {
  const m = rule.match;
  if (m === undefined || m === '*') return true;
  if (m === subject) return true;
  return rule.scope === 'sender' && subject.slice(subject.indexOf(':') + 1) === m;
}

export const capOf = (rule: BudgetRule): { unit: CounterUnit; cap: number } =>
  rule.usd !== undefined ? { unit: 'usd', cap: nanoOfUsd(rule.usd) } : { unit: 'tokens', cap: rule.tokens! };

/** The counters a call at `now` is charged to, one per distinct key, with the strictest cap among rules sharing it. */
export function countersFor(budgets: BudgetsConfig, a: UsageAttribution, now: number): CounterSpec[] {
  const byKey = new Map<string, CounterSpec>();
  budgets.rules.forEach((rule, ruleIndex) => {
    const subject = subjectOf(rule.scope, a);
    if (subject === undefined || !matches(rule, subject)) return;
    const { unit, cap } = capOf(rule);
    const window = periodAt(now, rule.per, budgets.timeZone);
    // `|` separates the key's parts: a subject cannot contain one (nor forge another counter's key).
    const key = `${rule.scope}|${subject.replace(/%/g, '%25').replace(/\|/g, '%7C')}|${rule.per}|${window.key}|${unit}`;
    const seen = byKey.get(key);
    // Two rules on one counter: the smaller cap holds; on a tie, `ask` (a raise is offered) loses to `refuse`.
    if (!seen || cap < seen.cap || (cap === seen.cap && rule.action === 'refuse')) {
      byKey.set(key, { key, scope: rule.scope, subject, unit, cap, window, ruleIndex, action: rule.action });
    }
  });
  return [...byKey.values()];
}

/**
 * How `after` loosens `before`, one line per loosening, for the config patch judge: a rule
 * whose counters no rule of `after` caps as tightly (removed, a higher cap, a narrower match, a
 * longer period's cap is not a day's, `refuse` turned `ask`), or a moved time zone (its periods
 * start afresh at another hour). Empty: every call refused before is refused after.
 */
export function budgetLoosening(before: BudgetsConfig, after: BudgetsConfig): string[] {
  const out: string[] = [];
  if (before.rules.length > 0 && before.timeZone !== after.timeZone) out.push(`budgets.timeZone ${before.timeZone} → ${after.timeZone}: periods turn over at another hour`);
  before.rules.forEach((rule, i) => {
    const { unit, cap } = capOf(rule);
    const kept = after.rules.some((r) => {
      const other = capOf(r);
      const covers = r.match === undefined || r.match === '*' || r.match === rule.match;
      return r.scope === rule.scope && r.per === rule.per && other.unit === unit && other.cap <= cap && covers && (r.action === 'refuse' || rule.action === 'ask');
    });
    if (!kept) out.push(`budgets.rules[${i}] (${rule.scope}${rule.match ? ` ${rule.match}` : ''}, ${rule.usd !== undefined ? `$${rule.usd}` : `${rule.tokens} tokens`} per ${rule.per}, ${rule.action}) is no longer held as tightly`);
  });
  return out;
}
