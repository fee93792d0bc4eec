import type { Db } from '../store/db.js';
import { formatUsd, NANO_PER_USD } from './cost.js';

/** How `warden usage --by` and `/usage` group the records. */
export const REPORT_DIMENSIONS = ['sender', 'channel', 'agent', 'model'] as const;
export type ReportDimension = (typeof REPORT_DIMENSIONS)[number];

export interface UsageTotals {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** Exact, in nano-dollars, over the calls whose price is known. */
  costNano: number;
  costUsd: number;
  /** Calls recorded with no known price: their tokens are counted, their cost is not in `costUsd`. */
  unpricedCalls: number;
}

export interface UsageRow extends UsageTotals {
  key: string;
  /** A sender's display name, as last recorded. */
  name?: string | undefined;
}

export interface UsageReport {
  since: string;
  by: ReportDimension | undefined;
  currency: 'USD';
  totals: UsageTotals;
  rows: UsageRow[];
  /** Where the prices came from (config entries, the dated built-in table). */
  priceSources: string[];
}

export interface ReportFilter {
  since: number;
  by?: ReportDimension | undefined;
  /** Only this sender (`platform:id`), channel or agent. */
  sender?: string | undefined;
  channelId?: string | undefined;
  agentId?: string | undefined;
  limit?: number | undefined;
}

const KEY_SQL: Record<ReportDimension, string> = {
  sender: "COALESCE(platform, '') || ':' || COALESCE(sender_id, '')",
  channel: "COALESCE(channel_id, '')",
  agent: 'agent_id',
  model: "provider || '/' || model",
};

const SUMS = `COUNT(*) AS calls, SUM(input_tokens) AS "inputTokens", SUM(output_tokens) AS "outputTokens", SUM(cached_tokens) AS "cachedInputTokens",
  SUM(cache_write_tokens) AS "cacheWriteTokens", SUM(reasoning_tokens) AS "reasoningTokens", SUM(COALESCE(cost_nano, 0)) AS "costNano",
  SUM(CASE WHEN cost_nano IS NULL THEN 1 ELSE 0 END) AS "unpricedCalls"`;

const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
function totals(row: Record<string, unknown> | undefined): UsageTotals {
  const costNano = num(row?.costNano);
  return {
    calls: num(row?.calls),
    inputTokens: num(row?.inputTokens),
    outputTokens: num(row?.outputTokens),
    cachedInputTokens: num(row?.cachedInputTokens),
    cacheWriteTokens: num(row?.cacheWriteTokens),
    reasoningTokens: num(row?.reasoningTokens),
    costNano,
    costUsd: costNano / NANO_PER_USD,
    unpricedCalls: num(row?.unpricedCalls),
  };
}

/** The usage recorded since `filter.since`, totalled and, with `by`, grouped (most expensive first). */
export async function usageReport(db: Db, filter: ReportFilter): Promise<UsageReport> {
  const where = ['at >= @since'];
  const params: Record<string, string | number> = { since: filter.since };
  if (filter.sender !== undefined) {
    where.push(`${KEY_SQL.sender} = @sender`);
    params.sender = filter.sender;
  }
  if (filter.channelId !== undefined) {
    where.push('channel_id = @channel');
    params.channel = filter.channelId;
  }
  if (filter.agentId !== undefined) {
    where.push('agent_id = @agent');
    params.agent = filter.agentId;
  }
  const clause = where.join(' AND ');
  const total = await db.get<Record<string, unknown>>(`SELECT ${SUMS} FROM usage_records WHERE ${clause}`, params);
  let rows: UsageRow[] = [];
  if (filter.by) {
    const key = KEY_SQL[filter.by];
    const limit = filter.limit !== undefined ? ` LIMIT ${Math.max(1, Math.floor(filter.limit))}` : '';
    const got = await db.all<Record<string, unknown>>(
      `SELECT ${key} AS "key", MAX(sender_name) AS "name", ${SUMS} FROM usage_records WHERE ${clause} GROUP BY ${key} ORDER BY "costNano" DESC, "key"${limit}`,
      params,
    );
    rows = got.map((r) => ({ key: String(r.key), ...(filter.by === 'sender' && r.name ? { name: String(r.name) } : {}), ...totals(r) }));
  }
  const sources = await db.all<{ source: string }>(`SELECT DISTINCT price_source AS "source" FROM usage_records WHERE ${clause} AND price_source IS NOT NULL ORDER BY "source"`, params);
  return { since: new Date(filter.since).toISOString(), by: filter.by, currency: 'USD', totals: totals(total), rows, priceSources: sources.map((s) => s.source) };
}

const COLUMNS: Array<[string, (r: UsageTotals) => string]> = [
  ['calls', (r) => String(r.calls)],
  ['input', (r) => String(r.inputTokens)],
  ['cached', (r) => String(r.cachedInputTokens)],
  ['output', (r) => String(r.outputTokens)],
  ['reasoning', (r) => String(r.reasoningTokens)],
  ['cost', (r) => costText(r)],
];

/** A cost with its currency, and the calls it leaves out for want of a price. */
export function costText(r: UsageTotals): string {
  const unpriced = r.unpricedCalls > 0 ? ` + ${r.unpricedCalls} call${r.unpricedCalls === 1 ? '' : 's'} price unknown` : '';
  return r.calls > 0 && r.unpricedCalls === r.calls ? 'price unknown' : `${formatUsd(r.costNano)}${unpriced}`;
}

/** CSV: one row per group (or the total), tokens and exact cost in USD. */
export function reportCsv(report: UsageReport): string {
  const head = [report.by ?? 'total', 'calls', 'input_tokens', 'cached_input_tokens', 'cache_write_tokens', 'output_tokens', 'reasoning_tokens', 'cost_usd', 'price_unknown_calls'];
  const line = (key: string, r: UsageTotals) =>
    [key, r.calls, r.inputTokens, r.cachedInputTokens, r.cacheWriteTokens, r.outputTokens, r.reasoningTokens, (r.costNano / NANO_PER_USD).toFixed(9), r.unpricedCalls].map((v) => csvCell(String(v))).join(',');
  const rows = report.by ? report.rows.map((r) => line(r.key, r)) : [line('total', report.totals)];
  return [head.join(','), ...rows].join('\n');
}

function csvCell(v: string): string {
  // A leading = + - @ would run as a formula in a spreadsheet; quotes keep commas and quotes literal.
  const safe = /^[=+\-@]/.test(v) && !/^-?\d/.test(v) ? `'${v}` : v;
  return /[",\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** A small fixed-width table (the CLI, the chat `/usage`), totals last, with the price sources. */
export function reportTable(report: UsageReport, title: string): string {
  const rows: Array<[string, UsageTotals]> = report.rows.map((r) => [r.name ? `${r.name} (${r.key})` : r.key || '(none)', r]);
  rows.push(['total', report.totals]);
  const header = [report.by ?? '', ...COLUMNS.map(([h]) => h)];
  const cells = rows.map(([k, r]) => [k, ...COLUMNS.map(([, f]) => f(r))]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const fmt = (c: string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ').trimEnd();
  const sources = report.priceSources.length > 0 ? `prices: ${report.priceSources.join('; ')}` : 'prices: none recorded';
  return [title, fmt(header), ...cells.map(fmt), sources].join('\n');
}

/** The same table as markdown (the web chat renders it as a table); platforms without tables get `reportTable` in a code block. */
export function reportMarkdown(report: UsageReport, title: string): string {
  const rows: Array<[string, UsageTotals]> = report.rows.map((r) => [r.name ? `${r.name} (${r.key})` : r.key || '(none)', r]);
  rows.push(['**total**', report.totals]);
  const esc = (v: string) => v.replace(/\|/g, '\\|');
  const header = `| ${report.by ?? ''} | ${COLUMNS.map(([h]) => h).join(' | ')} |`;
  const rule = `|---|${COLUMNS.map(() => '---:').join('|')}|`;
  const body = rows.map(([k, r]) => `| ${esc(k)} | ${COLUMNS.map(([, f]) => esc(f(r))).join(' | ')} |`);
  const sources = report.priceSources.length > 0 ? `prices: ${report.priceSources.join('; ')}` : 'prices: none recorded';
  return [`**${title}**`, '', header, rule, ...body, '', sources].join('\n');
}
