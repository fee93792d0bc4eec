import { closest } from '../config/errors.js';
import { resolveDataDir } from '../store/data-dir.js';
import { openConfiguredStore } from '../app/migrations.js';
import { periodAt } from '../usage/periods.js';
import { REPORT_DIMENSIONS, reportCsv, reportTable, usageReport, type ReportDimension } from '../usage/report.js';
import { EXIT, stringOption, type CommandRunner } from './args.js';
import { loadConfigForCommand } from './config.js';
import { unknownFlagProblems } from './context.js';

/**
 * `warden usage [--since WHEN] [--by sender|channel|agent|model] [--json | --csv]`: the model
 * calls recorded in the store, totalled (tokens by kind, cost in USD with its price sources).
 * `--since` takes a date (`2026-12-01`), an ISO time, or a span back from now (`7d`, `24h`);
 * default: the start of this month in `budgets.timeZone`.
 */
const FLAGS = ['config', 'json', 'csv', 'since', 'by', 'help'];

/** When `--since` starts, or an error naming what it accepts. */
export function parseSince(text: string | undefined, now: number, timeZone: string): { ok: true; at: number } | { ok: false; message: string } {
  if (text === undefined) return { ok: true, at: periodAt(now, 'month', timeZone).start };
  const span = /^(\d{1,5})([dh])$/.exec(text);
  if (span) return { ok: true, at: now - Number(span[1]) * (span[2] === 'd' ? 86_400_000 : 3_600_000) };
  const at = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : Date.parse(text);
  if (Number.isNaN(at)) return { ok: false, message: `--since: expected a date (2026-12-01), an ISO time or a span (7d, 24h), got "${text}"` };
  return { ok: true, at };
}

export const run: CommandRunner = async (args, io) => {
  const problems = unknownFlagProblems(args, FLAGS, closest);
  if (args.positionals.length > 0) problems.push(`takes no arguments, got "${args.positionals.join(' ')}"`);
  const json = args.options.get('json') === true;
  const csv = args.options.get('csv') === true;
  if (json && csv) problems.push('--json and --csv: choose one');
  const by = stringOption(args, 'by');
  if (args.options.get('by') === true || (by !== undefined && !(REPORT_DIMENSIONS as readonly string[]).includes(by))) {
    problems.push(`--by: expected ${REPORT_DIMENSIONS.join(' | ')}${by ? `, got "${by}"` : ''}`);
  }
  if (args.options.get('since') === true) problems.push('--since needs a value');
  const loaded = loadConfigForCommand(args, io);
  const since = loaded ? parseSince(stringOption(args, 'since'), Date.now(), loaded.config.budgets.timeZone) : undefined;
  if (since && !since.ok) problems.push(since.message);
  if (!loaded || problems.length > 0 || !since?.ok) {
    if (problems.length) io.stderr(problems.map((p) => `warden usage: ${p}`).join('\n'));
    return EXIT.badInput;
  }
  const opened = await openConfiguredStore({ dataDir: resolveDataDir({ configDataDir: loaded.config.dataDir, env: io.env, cwd: loaded.baseDir }), store: loaded.config.store });
  if (!opened.ok) {
    io.stderr(`warden usage: ${opened.error.message}`);
    return EXIT.badInput;
  }
  try {
    const report = await usageReport(opened.store.db, { since: since.at, by: by as ReportDimension | undefined });
    if (json) io.stdout(JSON.stringify(report, null, 2));
    else if (csv) io.stdout(reportCsv(report));
    else io.stdout(reportTable(report, `usage since ${report.since}`));
    return EXIT.ok;
  } finally {
    await opened.store.close();
  }
};
