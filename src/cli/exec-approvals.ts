import { readFileSync } from 'node:fs';
import path from 'node:path';
import { closest } from '../config/errors.js';
import { ANY_AGENT, ExecAllowlistStore, type StoredAllowlistEntry } from '../exec/allowlist-store.js';
import { buildApprovalsFile, parseApprovalsFile, type ImportedEntry } from '../exec/approvals-file.js';
import { effectiveExecConfig } from '../exec/check.js';
import { resolveDataDir } from '../store/data-dir.js';
import { openConfiguredStore } from '../app/migrations.js';
import { EXIT, stringOption, type CliIO, type CommandRunner } from './args.js';
import { COMMAND_USAGE } from './usage.js';
import { loadConfigForCommand } from './config.js';
import { unknownFlagProblems } from './context.js';

/**
 * `warden exec-approvals import FILE [--agent ID] [--dry-run] | export [--agent ID]`: carries exec
 * allowlists between OpenClaw's `exec-approvals.json` and Warden's store. Import adds entries
 * (policy fields are reported, never applied); export prints the live stored entries in
 * OpenClaw's shape with the config's policy as `defaults`.
 */
const FLAGS = ['config', 'json', 'agent', 'dry-run', 'help'];
const SUBCOMMANDS = ['import', 'export'];
const USAGE = COMMAND_USAGE['exec-approvals']!;

export const run: CommandRunner = async (args, io) => {
  if (args.options.get('help') === true) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  const problems = unknownFlagProblems(args, FLAGS, closest);
  const [sub, ...rest] = args.positionals;
  if (sub === undefined) problems.push(`missing subcommand: ${SUBCOMMANDS.join(' | ')}`);
  else if (!SUBCOMMANDS.includes(sub)) {
    const hint = closest(sub, SUBCOMMANDS);
    problems.push(`unknown subcommand "${sub}"${hint ? ` (did you mean "${hint}"?)` : ''}; expected ${SUBCOMMANDS.join(' | ')}`);
  } else if (sub === 'import' && rest.length !== 1) problems.push('import takes one FILE');
  else if (sub === 'export' && rest.length !== 0) problems.push('export takes no arguments; it writes to stdout');
  const agentFlag = args.options.get('agent');
  if (agentFlag === true || agentFlag === '') problems.push('--agent needs an agent id');
  const agent = stringOption(args, 'agent');

  const loaded = loadConfigForCommand(args, io);
  if (!loaded || problems.length > 0) {
    if (problems.length) io.stderr([...problems.map((p) => `warden exec-approvals: ${p}`), USAGE].join('\n'));
    return EXIT.badInput;
  }

  let imported: { entries: ImportedEntry[]; notes: string[] } | undefined;
  if (sub === 'import') {
    const file = path.resolve(io.cwd, rest[0]!);
    const read = readJson(file);
    if (!read.ok) {
      io.stderr(`warden exec-approvals: ${read.error}`);
      return EXIT.badInput;
    }
    imported = parseApprovalsFile(read.value);
    if (agent !== undefined) {
      const others = imported.entries.filter((e) => e.agentId !== agent);
      if (others.length > 0) imported.notes.push(`--agent ${agent}: ${others.length} entr${others.length === 1 ? 'y' : 'ies'} of other agents skipped (${[...new Set(others.map((e) => e.agentId))].join(', ')})`);
      imported.entries = imported.entries.filter((e) => e.agentId === agent);
    }
    const known = new Set([...loaded.config.agents.list.map((a) => a.id), 'main', ANY_AGENT]);
    for (const id of new Set(imported.entries.map((e) => e.agentId))) {
      if (!known.has(id)) imported.notes.push(`agents.${id}: no such agent in agents.list; its entries apply only once an agent with that id exists`);
    }
  }

  const opened = await openConfiguredStore({ dataDir: resolveDataDir({ configDataDir: loaded.config.dataDir, env: io.env, cwd: loaded.baseDir }), store: loaded.config.store });
  if (!opened.ok) {
    io.stderr(`warden exec-approvals: ${opened.error.message}`);
    return EXIT.badInput;
  }
  try {
    const store = new ExecAllowlistStore(opened.store.db);
    if (imported) return await importEntries(io, store, imported, args.options.get('dry-run') === true, args.options.get('json') === true);
    // This machine's (the gateway's) entries: a node's grants name another machine's binaries.
    const entries = (await store.all()).filter((e) => e.executor === store.executor && (agent === undefined || e.agentId === agent));
    io.stdout(JSON.stringify(buildApprovalsFile(entries, effectiveExecConfig(loaded.config), Date.now()), null, 2));
    return EXIT.ok;
  } finally {
    await opened.store.close();
  }
};

async function importEntries(io: CliIO, store: ExecAllowlistStore, imported: { entries: ImportedEntry[]; notes: string[] }, dryRun: boolean, json: boolean): Promise<number> {
  const added: Array<ImportedEntry | StoredAllowlistEntry> = [];
  if (dryRun) added.push(...imported.entries);
  // One at a time: the entries keep their order in the store.
  else for (const { agentId, ...entry } of imported.entries) added.push({ ...(await store.add(agentId, entry)), agentId });
  if (json) {
    io.stdout(JSON.stringify({ dryRun, imported: added.map((e) => ({ agentId: e.agentId, pattern: e.pattern, argPattern: e.argPattern, source: e.source })), notes: imported.notes }, null, 2));
    return EXIT.ok;
  }
  const lines = added.map((e) => `  ${e.agentId}  ${e.pattern}${e.argPattern !== undefined ? `  args ${JSON.stringify(e.argPattern)}` : ''}  (${e.source})`);
  io.stdout(
    [
      `${dryRun ? 'would import' : 'imported'} ${added.length} allowlist entr${added.length === 1 ? 'y' : 'ies'}${added.length ? ':' : ''}`,
      ...lines,
      ...imported.notes.map((n) => `note: ${n}`),
    ].join('\n'),
  );
  return EXIT.ok;
}

function readJson(file: string): { ok: true; value: unknown } | { ok: false; error: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { ok: false, error: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: `${file} is not valid JSON: ${(err as Error).message}` };
  }
}
