import { closest } from '../config/errors.js';
import { configSecrets, redactKnown } from '../redact/redact.js';
import path from 'node:path';
import { readStoredAllowlist } from '../exec/allowlist-store.js';
import { auditExec, type AuditFinding } from '../app/audit.js';
import { auditBudgets } from '../usage/audit.js';
import { effectiveExecConfig } from '../exec/check.js';
import { auditElevated } from '../exec/elevated.js';
import { auditRepoConfig } from '../exec/repo-config-audit.js';
import { auditSandbox } from '../exec/sandbox-audit.js';
import { probeSandbox } from '../exec/sandbox-probe.js';
import { bwrapAvailable, sandboxIdentity } from '../exec/sandbox.js';
import { auditPlugins } from '../plugins/audit.js';
import { loadPluginRuntime } from '../plugins/runtime.js';
import { DATABASE_FILE, resolveDataDir } from '../store/data-dir.js';
import { EXIT, type CommandRunner } from './args.js';
import { loadConfigForCommand } from './config.js';
import { readSharedAllowlist } from './stored-allowlist.js';
import type { ConfiguredStore } from '../app/migrations.js';
import { unknownFlagProblems } from './context.js';
import { auditGatewayHttp } from '../gateway/http/audit.js';
import { auditOps } from '../ops/audit.js';
import { auditNameKeyedScopes } from '../policy/scope-audit.js';
import { auditAccess } from '../policy/access-audit.js';
import { auditSkills } from '../skills/audit.js';
import { reservedCommandNames } from '../gateway/command-text.js';

/**
 * `warden audit`: what in the configuration is dangerous, with a fix for each finding.
 * Exit 1 when a finding is critical.
 */
const FLAGS = ['config', 'json', 'help'];
const ORDER: Record<AuditFinding['severity'], number> = { critical: 0, warn: 1, info: 2 };

export const run: CommandRunner = async (args, io) => {
  const problems = unknownFlagProblems(args, FLAGS, closest);
  if (args.positionals.length > 0) problems.push(`unexpected argument ${args.positionals.join(' ')}`);
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) return EXIT.badInput;
  if (problems.length > 0) {
    io.stderr(problems.map((p) => `warden audit: ${p}`).join('\n'));
    return EXIT.badInput;
  }
  const state = { baseDir: loaded.baseDir, dataDir: resolveDataDir({ configDataDir: loaded.config.dataDir, env: io.env, cwd: loaded.baseDir }), configFile: loaded.file };
  const hasBwrap = bwrapAvailable();
  // What this host really gives the sandbox, from a fresh run of it.
  const probe = await probeSandbox(sandboxIdentity(effectiveExecConfig(loaded.config).sandbox));
  // Plugins load first: their tools are part of the surfaces the exec findings judge.
  const plugins = await loadPluginRuntime(loaded.config, loaded.baseDir);
  const secrets = configSecrets(loaded.config, { env: io.env });
  const findings = [
    ...auditExec(loaded.config, { hasBwrap, state }),
    ...auditSandbox(loaded.config, { hasBwrap, probe }),
    ...(await repoConfigFindings(loaded.config, state)),
    ...auditElevated(loaded.config),
    ...(await auditPlugins(plugins)),
    ...auditGatewayHttp(loaded.config),
    ...auditOps(loaded.config),
    ...auditNameKeyedScopes(loaded.config),
    ...auditAccess(loaded.config),
    ...auditBudgets(loaded.config),
    ...auditSkills(loaded.config, { baseDir: loaded.baseDir, env: io.env, homeDir: io.env.HOME?.trim() || undefined, pluginSkillDirs: plugins.skillsDirs(), reservedCommands: reservedCommandNames() }),
  ]
    .sort((a, b) => ORDER[a.severity] - ORDER[b.severity])
    // A finding may quote a config value (a pattern, a plugin's load error, a store error): shown redacted.
    .map((f) => ({ ...f, message: redactKnown(f.message, secrets), fix: redactKnown(f.fix, secrets) }));
  if (args.options.get('json') === true) io.stdout(JSON.stringify({ findings }, null, 2));
  else if (findings.length === 0) io.stdout('no findings');
  else io.stdout(findings.map((f) => `${f.severity.toUpperCase().padEnd(8)} ${f.id}: ${f.message}\n         fix: ${f.fix}`).join('\n'));
  return findings.some((f) => f.severity === 'critical') ? EXIT.critical : EXIT.ok;
};

/** Allowlist entries that let the agent choose the code that runs: config ones and the stored ones. */
async function repoConfigFindings(config: Parameters<typeof auditRepoConfig>[0] & { store?: ConfiguredStore['store'] }, state: { baseDir: string; dataDir: string }): Promise<AuditFinding[]> {
  const stored = (await readSharedAllowlist({ dataDir: state.dataDir, store: config.store })) ?? (await readStoredAllowlist(path.join(state.dataDir, DATABASE_FILE)));
  const findings = auditRepoConfig(config, { baseDir: state.baseDir, stored: stored.ok ? stored.entries : [] });
  if (!stored.ok) findings.push({ id: 'exec.stored-allowlist-unreadable', severity: 'warn', message: stored.error, fix: 'check the data dir and its database file' });
  return findings;
}
