import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { closest } from '../config/errors.js';
import { readOnlyEntries, type StoredAllowlistEntry } from '../exec/allowlist-store.js';
import { checkExec } from '../app/exec-check.js';
import type { ExecVerdict } from '../exec/decide.js';
import { showArgv } from '../exec/rewrite.js';
import { resolveToolSurface } from '../policy/surface.js';
import { DATABASE_FILE, resolveDataDir } from '../store/data-dir.js';
import { SqliteDb } from '../store/sqlite/engine.js';
import { loadPluginRuntime } from '../plugins/runtime.js';
import { surfaceInputs } from '../app/surface-inputs.js';
import { EXIT, type CommandRunner } from './args.js';
import { COMMAND_USAGE } from './usage.js';
import { loadConfigForCommand } from './config.js';
import { readSharedAllowlist } from './stored-allowlist.js';
import { CONTEXT_FLAGS, contextFromArgs, unknownFlagProblems } from './context.js';

/**
 * `warden exec-check [context flags] -- COMMAND`: the exec verdict for a command under the
 * config's `tools.exec` and the allowlist stored in the data dir, in the context the flags
 * describe: where that context's tool surface has no exec (`warden tools` says why), the
 * answer is `deny: exec is not on this surface (…)`. Read-only: the database is opened
 * read-only and only when it exists.
 */
const FLAGS = ['config', 'json', 'help', ...CONTEXT_FLAGS];
const USAGE = COMMAND_USAGE['exec-check']!;

export const run: CommandRunner = async (args, io) => {
  const problems = unknownFlagProblems(args, FLAGS, closest);
  if (args.options.get('help') === true) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  if (args.positionals.length > 0) problems.push(`unexpected argument ${args.positionals.join(' ')}: put the command after --`);
  const command = args.rest.join(' ');
  if (command.trim() === '') problems.push('no command given after --');
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) return EXIT.badInput;
  const context = contextFromArgs(args, loaded.config);
  if (!context.ok) problems.push(...context.problems);
  if (problems.length > 0 || !context.ok) {
    io.stderr([...problems.map((p) => `warden exec-check: ${p}`), USAGE].join('\n'));
    return EXIT.badInput;
  }

  const dataDir = resolveDataDir({ configDataDir: loaded.config.dataDir, env: io.env, cwd: loaded.baseDir });
  const stored = (await readSharedAllowlist({ dataDir, store: loaded.config.store }, context.ctx.agentId)) ?? (await readStoredAllowlist(path.join(dataDir, DATABASE_FILE), context.ctx.agentId));
  if (!stored.ok) {
    io.stderr(`warden exec-check: ${stored.error}`);
    return EXIT.badInput;
  }
  const json = args.options.get('json') === true;
  // The surface `warden tools` prints for these flags, resolved with the same inputs as the bot's.
  const refusal = (await loadPluginRuntime(loaded.config, loaded.baseDir)).refusal();
  if (refusal) {
    io.stderr(`warden exec-check: ${refusal}`);
    return EXIT.badInput;
  }
  const surface = resolveToolSurface(loaded.config, context.ctx, surfaceInputs(loaded.config, loaded.baseDir));
  if (surface.error) {
    if (json) io.stdout(JSON.stringify({ error: surface.error }, null, 2));
    else io.stderr(`warden exec-check: ${surface.error}`);
    return EXIT.noTools;
  }
  const verdict = checkExec(loaded.config, command, context.ctx, { storedAllowlist: stored.entries, baseDir: loaded.baseDir, surface });
  const answer = toAnswer(verdict);
  io.stdout(json ? JSON.stringify(answer, null, 2) : human(answer));
  return VERDICT_EXIT[verdict.decision];
};

/** A script branches on the verdict: 0 allow, 4 ask, 5 deny (docs/cli.md). */
export const VERDICT_EXIT: Record<ExecVerdict['decision'], number> = { allow: EXIT.ok, ask: EXIT.ask, deny: EXIT.deny };

async function readStoredAllowlist(file: string, agentId: string): Promise<{ ok: true; entries: StoredAllowlistEntry[] } | { ok: false; error: string }> {
  if (!existsSync(file)) return { ok: true, entries: [] };
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    // The gateway's own grants: a node's are for its machine's binaries, not this one's.
    return { ok: true, entries: await readOnlyEntries(new SqliteDb(db), agentId) };
  } catch (err) {
    return { ok: false, error: `cannot read the stored allowlist in ${file}: ${(err as Error).message}` };
  } finally {
    db?.close();
  }
}

/** The CLI contract's fields first, then what explains them. */
export function toAnswer(v: ExecVerdict) {
  return {
    decision: v.decision,
    reason: v.reason,
    segments: v.segments.map((s) => ({
      argv: s.argv,
      resolved: s.resolved,
      matchedBy: s.matchedBy,
      ...(s.entry ? { entry: s.entry } : {}),
      ...(s.miss ? { miss: s.miss } : {}),
      ...(s.repoConfig ? { repoConfig: s.repoConfig.binary } : {}),
    })),
    rewritten: v.rewritten,
    analysis: v.analysis,
    askReasons: v.askReasons,
    ...(v.changedSinceApproval.length > 0 ? { changedSinceApproval: v.changedSinceApproval } : {}),
    ...(v.decision === 'ask' ? { allowAlways: { offered: v.allowAlways.offered, ...(v.allowAlways.why ? { why: v.allowAlways.why } : {}) } } : {}),
  };
}

function human(answer: ReturnType<typeof toAnswer>): string {
  const lines = [`${answer.decision}: ${answer.reason}`];
  answer.segments.forEach((s, i) => {
    lines.push(`  ${i + 1}. ${showArgv(s.argv)}  →  ${s.resolved ?? '(unresolved)'}  ${s.matchedBy ? `[${s.matchedBy}]` : `[miss: ${s.miss}]`}`);
  });
  if (answer.rewritten) lines.push(`runs as: ${answer.rewritten}`);
  if (answer.allowAlways) lines.push(answer.allowAlways.offered ? 'allow-always: offered' : `allow-always: not offered (${answer.allowAlways.why})`);
  return lines.join('\n');
}
