import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { closest } from '../config/errors.js';
import { openConfiguredStore } from '../app/migrations.js';
import { openSecrets } from '../app/secret-grants.js';
import { defaultAgentId, knownAgentIds } from '../policy/steps.js';
import { AuditLog } from '../store/audit.js';
import { resolveDataDir } from '../store/data-dir.js';
import { SECRET_NAME } from '../store/secret-store.js';
import { EXIT, stringOption, type CommandRunner } from './args.js';
import { loadConfigForCommand } from './config.js';
import { unknownFlagProblems } from './context.js';

/**
 * `warden secrets list | set NAME (--value-file FILE | --from-env VAR) | rm NAME
 * [--agent ID] [--session KEY] [--json]`: the secret store on the host. A value never comes
 * from the command line (it would sit in shell history and `ps`), never goes to stdout; set and
 * rm leave audit rows naming the secret.
 */

const FLAGS = ['config', 'json', 'agent', 'session', 'value-file', 'from-env', 'help'];
const SUBCOMMANDS = ['list', 'set', 'rm'];

export const run: CommandRunner = async (args, io) => {
  const json = args.options.get('json') === true;
  const problems = unknownFlagProblems(args, FLAGS, closest);
  const [sub, ...rest] = args.positionals;
  if (sub === undefined) problems.push(`missing subcommand: ${SUBCOMMANDS.join(' | ')}`);
  else if (!SUBCOMMANDS.includes(sub)) {
    const hint = closest(sub, SUBCOMMANDS);
    problems.push(`unknown subcommand "${sub}"${hint ? ` (did you mean "${hint}"?)` : ''}; expected ${SUBCOMMANDS.join(' | ')}`);
  } else if (sub === 'list' ? rest.length !== 0 : rest.length !== 1) {
    problems.push(sub === 'list' ? 'list takes no arguments' : `usage: warden secrets ${sub} NAME`);
  }
  const name = rest[0];
  if (name !== undefined && !SECRET_NAME.test(name)) problems.push(`NAME must be an environment variable name (A-Z, 0-9, _), got "${name}"`);
  const valueFile = stringOption(args, 'value-file');
  const fromEnv = stringOption(args, 'from-env');
  if (sub === 'set' && (valueFile === undefined) === (fromEnv === undefined)) problems.push('set needs exactly one of --value-file FILE (/dev/stdin for a pipe) or --from-env VAR; a value on the command line would be kept in shell history');
  if (sub !== 'set' && (valueFile !== undefined || fromEnv !== undefined)) problems.push('--value-file and --from-env belong to set');

  const loaded = loadConfigForCommand(args, io);
  if (!loaded || problems.length > 0) {
    if (problems.length) io.stderr(problems.map((p) => `warden secrets: ${p}`).join('\n'));
    return EXIT.badInput;
  }
  const agentId = stringOption(args, 'agent') ?? defaultAgentId(loaded.config);
  if (!knownAgentIds(loaded.config).includes(agentId)) {
    io.stderr(`warden secrets: --agent: no agent "${agentId}" (known: ${knownAgentIds(loaded.config).join(', ')})`);
    return EXIT.badInput;
  }
  const scope = stringOption(args, 'session') ?? '';
  let value: string | undefined;
  if (sub === 'set') {
    try {
      value = fromEnv !== undefined ? io.env[fromEnv] : readFileSync(valueFile!, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      io.stderr(`warden secrets: --value-file: ${(err as Error).message}`);
      return EXIT.badInput;
    }
    if (!value) {
      io.stderr(fromEnv !== undefined ? `warden secrets: --from-env: ${fromEnv} is not set or empty` : 'warden secrets: --value-file: the file is empty');
      return EXIT.badInput;
    }
  }

  const dataDir = resolveDataDir({ configDataDir: loaded.config.dataDir, env: io.env, cwd: loaded.baseDir });
  const opened = await openConfiguredStore({ dataDir, store: loaded.config.store });
  if (!opened.ok) {
    io.stderr(`warden secrets: ${opened.error.message}`);
    return EXIT.badInput;
  }
  const store = opened.store;
  const audit = new AuditLog(store.db);
  const secrets = await openSecrets(store.db, dataDir, io.env, audit, 'cli');
  try {
    if (!secrets.ok) {
      io.stderr(`warden secrets: ${secrets.error}`);
      return EXIT.badInput;
    }
    const actor = `cli:${userInfo().username || 'operator'}`;
    switch (sub) {
      case 'list': {
        const entries = (await secrets.secrets.store.list(stringOption(args, 'agent') ? { agentId } : {})).map((e) => ({ ...e, set: true }));
        const grants = loaded.config.secrets.grants;
        const line = (e: (typeof entries)[number]) => {
          const to = grants.filter((g) => g.name === e.name).map((g) => g.to + (g.commands ? ` (${g.commands.join(', ')})` : ''));
          return `${e.name}  agent ${e.agentId}${e.scope ? `  conversation ${e.scope}` : ''}  set ${new Date(e.updatedAt).toISOString()}${e.setBy ? ` by ${e.setBy}` : ''}  ${to.length ? `granted to ${to.join('; ')}` : 'granted to nothing'}`;
        };
        io.stdout(json ? JSON.stringify({ secrets: entries }, null, 2) : entries.length ? entries.map(line).join('\n') : 'no secrets stored');
        return EXIT.ok;
      }
      case 'set': {
        await secrets.secrets.store.set({ agentId, scope, name: name!, value: value!, setBy: actor });
        await audit.record({ type: 'secret.set', subject: name, actor, data: { name, agentId, scope: scope ? 'conversation' : 'agent', via: 'cli' } });
        io.stdout(json ? JSON.stringify({ name, agentId, set: true }, null, 2) : `${name} set for agent ${agentId}${scope ? ` in ${scope}` : ''}`);
        return EXIT.ok;
      }
      case 'rm': {
        const removed = await secrets.secrets.store.remove(agentId, name!, scope);
        if (removed) await audit.record({ type: 'secret.deleted', subject: name, actor, data: { name, agentId, via: 'cli' } });
        io.stdout(json ? JSON.stringify({ name, agentId, removed }, null, 2) : removed ? `${name} removed` : `no secret ${name} for agent ${agentId}`);
        return removed ? EXIT.ok : EXIT.badInput;
      }
    }
    return EXIT.badInput;
  } finally {
    if (secrets.ok) secrets.secrets.close();
    await store.close();
  }
};
