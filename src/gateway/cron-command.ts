import type { ToolExecutor } from '../agent/index.js';
import { parseSchedule } from '../cron/schedule.js';
import { readableUtc } from '../util/readable-time.js';
import { channelRefsIn } from '../tools/core/cron/target.js';
import type { CronArgs, JobView, runView } from '../tools/core/cron/cron.js';
import { ownerOnlyRefusal } from '../tools/invoke/owner-guard.js';
import type { ToolResult } from '../tools/types.js';
import type { Route } from './router.js';
import type { OutboundMessage } from './types.js';

/** What `/cron` needs: the governed call path and the surface report, as `/exec` uses them. */
export interface CronCommandDeps {
  tools: ToolExecutor | undefined;
  toolReport(context: Route['context']): { tools: string[]; removed: Array<{ tool: string; by: string }>; unavailable: Array<{ tool: string; why: string }> };
  newCallId(): string;
}

export const CRON_USAGE = [
  'usage:',
  '/cron list',
  '/cron add "<schedule>" <message> — schedule: a cron expression ("0 9 * * 1-5", optionally followed by a time zone such as Europe/Paris), "every 30m|2h|1d", or "at 2026-12-01T09:00:00Z"; the job posts here, or in the one channel the message names (#ops)',
  '/cron run|pause|resume|remove|runs <id>',
].join('\n');

const SUBCOMMANDS = ['list', 'add', 'run', 'pause', 'resume', 'remove', 'runs'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

export type ParsedCron = { ok: true; sub: Subcommand; call: CronArgs } | { ok: false; message: string };

const QUOTES: ReadonlyArray<readonly [open: string, close: string]> = [['"', '"'], ["'", "'"], ['`', '`'], ['“', '”'], ['‘', '’']];

/**
 * `"…"`, `'…'`, `` `…` `` or typographic quotes around a non-empty schedule, then whitespace and
 * the message (trimmed). Found with indexOf: the typed text is anyone's in the channel.
 */
export function quotedSchedule(rest: string): { spec: string; message: string } | undefined {
  const pair = QUOTES.find(([open]) => rest.startsWith(open));
  if (!pair) return undefined;
  const [open, close] = pair;
  const end = rest.indexOf(close, open.length);
  if (end <= open.length) return undefined;
  const after = rest.slice(end + close.length);
  // Whitespace, then at least one more character.
  if (after.length < 2 || !/^\s/.test(after)) return undefined;
  return { spec: rest.slice(open.length, end), message: after.trim() };
}
const EVERY = /^every\s+(\d+)\s*(m|min|mins|minutes?|h|hours?|d|days?)$/i;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The schedule part of `/cron add` as cron tool arguments. */
export function scheduleArgs(spec: string): Pick<CronArgs, 'cron' | 'tz' | 'everyMs' | 'at'> {
  const s = spec.trim();
  const every = EVERY.exec(s);
  if (every) return { everyMs: Number(every[1]) * UNIT_MS[every[2]![0]!.toLowerCase()]! };
  if (/^at\s+/i.test(s)) return { at: s.replace(/^at\s+/i, '') };
  const words = s.split(/\s+/);
  const last = words.at(-1)!;
  // A trailing IANA zone (Europe/Paris, UTC) belongs to the cron expression.
  if (words.length > 5 && (last.includes('/') || /^utc$/i.test(last))) return { cron: words.slice(0, -1).join(' '), tz: last };
  return { cron: s };
}

/**
 * `/cron <subcommand> …` as the cron tool call it stands for. `add` posts in this conversation
 * unless its message names one channel (`#ops`, or its mention), which the tool then resolves
 * as it resolves a `target` the model gives.
 */
export function parseCronCommand(args: string): ParsedCron {
  const [first = 'list', ...restWords] = args.trim().split(/\s+/).filter(Boolean);
  const sub = first.toLowerCase() as Subcommand;
  if (!(SUBCOMMANDS as readonly string[]).includes(sub)) return { ok: false, message: `unknown /cron subcommand "${first}"\n${CRON_USAGE}` };
  const rest = args.trim().slice(first.length).trim();
  switch (sub) {
    case 'list':
      return restWords.length === 0 ? { ok: true, sub, call: { action: 'list' } } : { ok: false, message: CRON_USAGE };
    case 'add': {
      const quoted = quotedSchedule(rest);
      if (!quoted) return { ok: false, message: `/cron add needs a quoted schedule and a message\n${CRON_USAGE}` };
      const { spec, message } = quoted;
      const refs = channelRefsIn(message);
      if (refs.length > 1) return { ok: false, message: `the message names ${refs.length} channels (${refs.map((r) => r.label).join(', ')}); a job posts in one — name just that one` };
      return { ok: true, sub, call: { action: 'add', ...scheduleArgs(spec), message, ...(refs[0] ? { target: refs[0].label } : {}) } };
    }
    default: {
      const [id, ...extra] = restWords;
      if (!id || extra.length > 0) return { ok: false, message: `usage: /cron ${sub} <id>` };
      const action: CronArgs['action'] = sub === 'pause' || sub === 'resume' ? 'update' : sub;
      return { ok: true, sub, call: { action, id, ...(sub === 'pause' ? { enabled: false } : sub === 'resume' ? { enabled: true } : {}) } };
    }
  }
}

/**
 * `/cron` for owners, without a model: the same owner gate as the cron tool (a non-owner gets
 * its refusal and nothing else, not even the usage), then the cron tool itself through the whole
 * call chain, as `/exec` runs exec, so validation, store and scheduler are the tool's.
 */
export async function runCronCommand(args: string, route: Route, deps: CronCommandDeps, signal: AbortSignal): Promise<OutboundMessage> {
  const refusal = ownerOnlyRefusal('cron', route.context);
  if (refusal) return { text: refusal };
  const parsed = parseCronCommand(args);
  if (!parsed.ok) return { text: parsed.message };
  if (parsed.call.action === 'add') {
    // Checked here too, so a typo is answered in the command's words before the tool runs.
    const check = parseSchedule({ cron: parsed.call.cron, tz: parsed.call.tz, everyMs: parsed.call.everyMs, at: parsed.call.at }, Date.now());
    if (!check.ok) return { text: `/cron add: ${check.error}` };
  }
  const report = deps.toolReport(route.context);
  if (!report.tools.includes('cron')) {
    const removed = report.removed.find((r) => r.tool === 'cron');
    const unavailable = report.unavailable.find((u) => u.tool === 'cron');
    return { text: `cron is not available here: ${removed ? `removed by ${removed.by}` : (unavailable?.why ?? 'not on this conversation’s tool surface')}.` };
  }
  if (!deps.tools) return { text: 'cron cannot run: the tool call path is not set up in this process.' };
  const surface = await deps.tools.surface(route.context, route.sessionKey);
  if (!surface.ok) return { text: surface.message };
  const result = await deps.tools.execute(
    { toolCallId: deps.newCallId(), tool: 'cron', args: parsed.call as unknown as Record<string, unknown> },
    { sessionKey: route.sessionKey, turn: surface.turn ?? route.context, signal, surface: surface.tools.map((t) => t.id) },
  );
  return { text: formatCronResult(parsed.sub, result) };
}

type RunView = ReturnType<typeof runView>;

function formatCronResult(sub: Subcommand, result: ToolResult): string {
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  if (result.isError) return text;
  const details = result.details as Record<string, unknown> | undefined;
  switch (sub) {
    case 'list': {
      const jobs = (details?.jobs ?? []) as JobView[];
      if (jobs.length === 0) return 'No cron jobs. Add one with /cron add "<schedule>" <message>.';
      return [`Cron jobs (${jobs.length}):`, ...jobs.map(formatJob)].join('\n');
    }
    case 'pause': {
      const job = details as unknown as JobView;
      return `Paused job ${job.id} ("${job.name}").`;
    }
    case 'resume': {
      const job = details as unknown as JobView;
      return `Resumed job ${job.id} ("${job.name}"); next run ${job.nextRunAt ? readableUtc(job.nextRunAt) : 'none'}.`;
    }
    case 'runs': {
      const runs = (details?.runs ?? []) as RunView[];
      if (runs.length === 0) return `Job ${String(details?.id)} has not run yet.`;
      return [`Runs of job ${String(details?.id)} ("${String(details?.name)}"), newest first:`, ...runs.map((r) => `• ${formatRun(r)}`)].join('\n');
    }
    default:
      return text;
  }
}

function formatJob(job: JobView): string {
  const state = !job.enabled ? 'paused' : job.state === 'running' ? 'running now' : job.state === 'parked' ? 'waiting for an approval' : job.state === 'queued' ? 'waiting for a slot' : `next ${job.nextRunAt ? readableUtc(job.nextRunAt) : 'none'}`;
  const last = job.lastRun ? ` · last ${formatRun(job.lastRun)}` : '';
  return `• ${job.id} "${job.name}" — ${job.schedule} → ${job.target} · ${state}${last}`;
}

function formatRun(r: RunView): string {
  const at = r.startedAt ?? r.dueAt;
  const when = at === null ? 'not started' : readableUtc(at);
  const took = r.durationMs === null ? '' : ` in ${formatMs(r.durationMs)}`;
  return `${r.status}${took} (${r.trigger}, ${when})${r.detail && r.status !== 'ok' ? `: ${r.detail}` : ''}`;
}

function formatMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

