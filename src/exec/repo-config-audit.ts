import path from 'node:path';
import type { WardenConfig } from '../config/schema/index.js';
import { knownAgentIds } from '../policy/steps.js';
import type { AllowlistEntry } from './allowlist.js';
import type { StoredAllowlistEntry } from './allowlist-store.js';
import type { AuditFinding } from '../config/audit-finding.js';
import { agentWorkspace, effectiveExecConfig } from './check.js';
import { entryRepoConfigMembers } from './repo-config.js';
import { interpreterFamily, scriptOperands } from './script-operands.js';
import { isWithinOrEqual } from '../util/path-within.js';

/**
 * `warden audit` findings for allowlist entries that let the agent choose the code that runs:
 * entries for binaries that execute repository configuration (repo-config.ts), and config
 * entries for scripts the agent can rewrite. Config entries bind a path, never content — there
 * is no approval moment to take a snapshot at — so a script inside the workspace, or an
 * interpreter free to run one, is as good as `security: full` for the agent. Pure.
 */
export interface RepoConfigAuditInput {
  /** Every stored entry (allow-always grants and imports), of every agent. */
  stored?: readonly StoredAllowlistEntry[];
  /** Directory relative config paths resolve against. */
  baseDir?: string;
}

const INTERPRETERS = new Set([
  'python', 'node', 'perl', 'ruby', 'php', 'lua', 'luajit', 'shell', 'rscript', 'tclsh', 'wish', 'expect', 'osascript', 'bun', 'deno', 'tsx', 'ts-node',
  'java', 'pwsh', 'powershell', 'julia', 'elixir', 'escript', 'guile', 'racket', 'ocaml', 'groovy', 'raku', 'rakudo', 'crystal', 'gjs', 'qjs', 'clisp',
]);

export function auditRepoConfig(config: WardenConfig, input: RepoConfigAuditInput = {}): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const baseDir = input.baseDir ?? process.cwd();
  const agents = knownAgentIds(config);
  const workspaces = agents.map((id) => agentWorkspace(config, id, baseDir));
  // One finding per entry, naming every agent whose effective allowlist holds it.
  const seen = new Map<string, { entry: AllowlistEntry; agents: string[] }>();
  for (const agentId of agents) {
    const exec = effectiveExecConfig(config, agentId);
    if (exec.security !== 'allowlist') continue;
    for (const entry of exec.allowlist) {
      const key = JSON.stringify([entry.pattern, entry.argPattern ?? null, entry.trustRepoConfig ?? false]);
      const known = seen.get(key);
      if (known) known.agents.push(agentId);
      else seen.set(key, { entry, agents: [agentId] });
    }
  }
  for (const { entry, agents: who } of seen.values()) {
    const label = describeEntry(entry);
    const members = entryRepoConfigMembers(entry);
    if (members.length > 0) {
      const named = `${members.slice(0, 6).join(', ')}${members.length > 6 ? `, … (${members.length} in all)` : ''}`;
      if (entry.trustRepoConfig === true) {
        findings.push({
          id: 'exec.allowlist-repo-config-trusted',
          severity: 'warn',
          message: `tools.exec.allowlist entry ${label} (agent ${who.join(', ')}) trusts the repository configuration of ${named}: whatever the agent writes to that configuration in its workspace runs without approval`,
          fix: 'keep trustRepoConfig only where the workspace holds a repository the agent cannot change, or remove the entry',
        });
      } else {
        findings.push({
          id: 'exec.allowlist-repo-config',
          severity: 'critical',
          message: `tools.exec.allowlist entry ${label} (agent ${who.join(', ')}) covers ${named}, which run${members.length === 1 ? 's' : ''} repository configuration the agent can write (for git: .git/config fsmonitor, hooks, pager, filters, aliases): such commands ask every time, and the entry gives a false sense of an allowlist`,
          fix: `remove the entry; or set trustRepoConfig: true on it if the repository configuration in the workspace is trusted`,
        });
      }
    }
    const script = writableScript(entry, workspaces, baseDir);
    if (script) {
      findings.push({
        id: 'exec.allowlist-agent-writable-script',
        severity: 'critical',
        message: `tools.exec.allowlist entry ${label} (agent ${who.join(', ')}) ${script}: a config entry binds a path, not the file's content, so the agent can rewrite what runs without approval`,
        fix: 'move the script out of the workspace to a directory only the operator can write and allowlist that path, or drop the entry and let allow-always bind the script by content',
      });
    }
  }
  for (const entry of input.stored ?? []) {
    const members = entryRepoConfigMembers(entry);
    if (members.length === 0) continue;
    findings.push({
      id: 'exec.stored-repo-config',
      severity: 'critical',
      message: `the stored ${entry.source} entry ${entry.id} (agent ${entry.agentId}) ${describeEntry(entry)} covers ${members.slice(0, 6).join(', ')}, which runs repository configuration the agent can write; Warden asks for it anyway and a stored entry cannot opt in`,
      fix: `warden approvals revoke ${entry.id}`,
    });
  }
  return findings;
}

function describeEntry(entry: { pattern: string; argPattern?: string | undefined }): string {
  return entry.argPattern ? `${JSON.stringify(entry.pattern)} (argPattern ${JSON.stringify(entry.argPattern)})` : JSON.stringify(entry.pattern);
}

/**
 * `pattern` cut at its first `*` or `?`, as `/[*?].*$/` cuts it: that `.` stops at a line break, so
 * the cut is the first one after the last break. Scanned, since the pattern retries every `*`.
 */
export function beforeWildcard(pattern: string): string {
  let from = pattern.length;
  while (from > 0 && !'\n\r\u2028\u2029'.includes(pattern[from - 1]!)) from--;
  for (let i = from; i < pattern.length; i++) if (pattern[i] === '*' || pattern[i] === '?') return pattern.slice(0, i);
  return pattern;
}

/**
 * Why a config entry runs a file the agent can write, or null: its pattern lies in a
 * workspace, or it names an interpreter whose argPattern does not pin a script outside every
 * workspace (no argPattern lets it run any script at all).
 */
function writableScript(entry: AllowlistEntry, workspaces: readonly string[], baseDir: string): string | null {
  const { pattern, argPattern } = entry;
  if (pattern.startsWith('=')) return null;
  if (pattern.includes('/') && !pattern.startsWith('~')) {
    const absolute = path.resolve(baseDir, beforeWildcard(pattern));
    const inside = workspaces.find((w) => isWithinOrEqual(absolute, w) || isWithinOrEqual(w, absolute));
    if (inside) return `names a path in the workspace ${inside}`;
  }
  const last = pattern.split('/').pop() ?? pattern;
  if (last.includes('*') || last.includes('?')) return null; // the repo-config check covers globs over members
  const family = interpreterFamily(last);
  if (!INTERPRETERS.has(family)) return null;
  if (argPattern === undefined || argPattern === '') return `lets ${last} run any script, including ones the agent writes`;
  if (argPattern.startsWith('^') || /[*?\x00]/.test(argPattern)) return `lets ${last} run scripts its argPattern does not pin to one file`;
  const operands = scriptOperands([last, ...argPattern.split(' ')]);
  if (operands.kind === 'none') return null;
  if (operands.kind === 'unknown') return `lets ${last} run a file this check cannot tell (${operands.why})`;
  const writable = operands.files.find((f) => !path.isAbsolute(f) || workspaces.some((w) => isWithinOrEqual(f, w)));
  return writable ? `lets ${last} run ${writable}, a file in the workspace` : null;
}
