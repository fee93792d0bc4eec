import type { BudgetsConfig } from '../config/index.js';

export type Period = BudgetsConfig['rules'][number]['per'];

/** One budget period: its key (part of a counter's name) and when it began and ends, in epoch ms. */
export interface PeriodWindow {
  key: string;
  start: number;
  end: number;
}

/** A formatter per time zone; bounded (the oldest goes first), though valid zone names are a few hundred. */
export const partsCache = new Map<string, Intl.DateTimeFormat>();
export const PARTS_CACHE_MAX = 64;
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = partsCache.get(timeZone);
  if (!f) {
    if (partsCache.size >= PARTS_CACHE_MAX) partsCache.delete(partsCache.keys().next().value!);
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    partsCache.set(timeZone, f);
  }
  return f;
}

/** The wall-clock date and time in `timeZone` at `ms`. */
function wallClock(ms: number, timeZone: string): { y: number; m: number; d: number; h: number; min: number; s: number } {
  const out: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return { y: out.year!, m: out.month!, d: out.day!, h: out.hour! % 24, min: out.minute!, s: out.second! };
}

/** How far `timeZone` is ahead of UTC at `ms`, in ms. */
function offsetAt(ms: number, timeZone: string): number {
  const w = wallClock(ms, timeZone);
  return Date.UTC(w.y, w.m - 1, w.d, w.h, w.min, w.s) - Math.floor(ms / 1000) * 1000;
}

/** The instant local midnight of y-m-d happens in `timeZone` (the offset re-read once, for a DST change that day). */
function localMidnight(y: number, m: number, d: number, timeZone: string): number {
  const guess = Date.UTC(y, m - 1, d);
  const first = guess - offsetAt(guess, timeZone);
  return guess - offsetAt(first, timeZone);
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * The period `per` containing `now`, with days, ISO weeks (from Monday) and months turning over
 * at local midnight in `timeZone`.
 */
export function periodAt(now: number, per: Period, timeZone: string): PeriodWindow {
  const w = wallClock(now, timeZone);
  if (per === 'day') {
    const next = new Date(Date.UTC(w.y, w.m - 1, w.d + 1));
    return { key: `${w.y}-${pad(w.m)}-${pad(w.d)}`, start: localMidnight(w.y, w.m, w.d, timeZone), end: localMidnight(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), timeZone) };
  }
  if (per === 'week') {
    const weekday = (new Date(Date.UTC(w.y, w.m - 1, w.d)).getUTCDay() + 6) % 7; // Monday 0
    const monday = new Date(Date.UTC(w.y, w.m - 1, w.d - weekday));
    const nextMonday = new Date(Date.UTC(w.y, w.m - 1, w.d - weekday + 7));
    const key = `${monday.getUTCFullYear()}-${pad(monday.getUTCMonth() + 1)}-${pad(monday.getUTCDate())}/week`;
    return {
      key,
      start: localMidnight(monday.getUTCFullYear(), monday.getUTCMonth() + 1, monday.getUTCDate(), timeZone),
      end: localMidnight(nextMonday.getUTCFullYear(), nextMonday.getUTCMonth() + 1, nextMonday.getUTCDate(), timeZone),
    };
  }
  const nextMonth = new Date(Date.UTC(w.y, w.m, 1));
  return { key: `${w.y}-${pad(w.m)}`, start: localMidnight(w.y, w.m, 1, timeZone), end: localMidnight(nextMonth.getUTCFullYear(), nextMonth.getUTCMonth() + 1, 1, timeZone) };
}

/** `2026-12-07 00:00 Europe/Berlin` — when a period ends, in the zone budgets count in. */
export function describeReset(end: number, timeZone: string): string {
  const w = wallClock(end, timeZone);
  return `${w.y}-${pad(w.m)}-${pad(w.d)} ${pad(w.h)}:${pad(w.min)} ${timeZone}`;
}
