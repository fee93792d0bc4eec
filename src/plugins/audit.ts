import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { AuditFinding } from '../config/audit-finding.js';
import type { HookToolContext } from '../hooks/types.js';
import { parsePackageSpec } from './discover.js';
import { loadFailureVerdict } from './load-failure.js';
import type { PluginRecord, PluginRuntime } from './runtime.js';

/**
 * `warden audit` findings about plugins. Plugins are trusted code inside Warden's process, so
 * what matters is who can change that code and what it does to calls:
 * - code (folders, entry modules, the folder they were found in) that another local user can
 *   write or owns: that user's code runs as Warden, with its tokens;
 * - packages not pinned to a version in `plugins.load`;
 * - a before_tool_call hook that rewrites exec arguments: what runs is not what the model
 *   asked for, and the transcript shows the model's command;
 * - plugins that failed to load, trusted policies and conversation access, for the record.
 */

export interface PluginAuditEnv {
  /** The uid Warden runs as (default: this process's). */
  uid?: number | undefined;
  /** Skip calling hook handlers (the probe of exec rewriting). */
  probeHooks?: boolean | undefined;
}

/** The probe command a before_tool_call handler that sees exec is called with. */
export const EXEC_PROBE_COMMAND = 'echo warden-audit-probe';

export async function auditPlugins(runtime: PluginRuntime, env: PluginAuditEnv = {}): Promise<AuditFinding[]> {
  const uid = env.uid ?? process.getuid?.() ?? 0;
  const findings: AuditFinding[] = [];
  for (const p of runtime.plugins) {
    if (p.status === 'disabled') continue;
    if (p.status === 'error' || p.status === 'blocked') findings.push(notLoaded(p));
    findings.push(...writableCode(p, uid));
    if (p.origin === 'package' && p.requested !== undefined && parsePackageSpec(p.requested).version === undefined) {
      findings.push({
        id: 'plugins.unpinned',
        severity: 'warn',
        message: `plugins.load names ${p.requested} without a version: whatever version is installed next runs inside Warden`,
        fix: `pin it: plugins.load: ["${p.packageName}@${p.version ?? '<version>'}"] (Warden then refuses any other installed version)`,
      });
    }
    if (p.trustedPolicies.length > 0) {
      findings.push({ id: 'plugins.trusted-policy', severity: 'info', message: `plugin ${p.id} decides tool calls before the hooks with trusted policies ${p.trustedPolicies.join(', ')} (they can block, rewrite arguments and ask for approval)`, fix: 'review the plugin; remove it from plugins.allow / entries if it should not decide calls' });
    }
    if (p.hooksPolicy.allowConversationAccess === true && p.status === 'loaded') {
      findings.push({ id: 'plugins.conversation-access', severity: 'info', message: `plugin ${p.id} may read conversations (plugins.entries.${p.id}.hooks.allowConversationAccess)`, fix: `set plugins.entries.${p.id}.hooks.allowConversationAccess: false unless it needs them` });
    }
  }
  for (const u of runtime.unresolved) {
    findings.push({ id: 'plugins.unresolved', severity: 'critical', message: `${u.path}: ${u.message.replace(/^plugins\.\S+: /, '')}; Warden does not start with it`, fix: `fix ${u.path}, or remove it` });
  }
  if (env.probeHooks !== false) findings.push(...(await execRewriters(runtime)));
  return findings;
}

/** A configured plugin that is not running: critical when it is a policy plugin (its rules are gone, and `warden start` refuses). */
function notLoaded(p: PluginRecord): AuditFinding {
  const verdict = loadFailureVerdict(p);
  if (verdict.kind === 'stop') {
    return { id: 'plugins.policy-not-loaded', severity: 'critical', message: verdict.message, fix: `fix the plugin (warden plugins shows its diagnostics), or set plugins.entries.${p.id}.enabled: false to run without its rules` };
  }
  if (verdict.kind === 'withhold') return { id: 'plugins.policy-withheld', severity: 'warn', message: verdict.message, fix: `fix the plugin (warden plugins shows its diagnostics)` };
  return { id: 'plugins.not-loaded', severity: 'warn', message: `plugin ${p.id} is not running: ${p.why}`, fix: `fix the plugin (warden plugins shows its diagnostics) or set plugins.entries.${p.id}.enabled: false` };
}

/** Folders and files of a plugin that someone other than Warden's user (or root) can change. */
function writableCode(p: PluginRecord, uid: number): AuditFinding[] {
  const out: AuditFinding[] = [];
  const seen = new Set<string>();
  const check = (file: string, what: string, ancestor = false) => {
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    const st = statSync(file);
    const worldWritable = (st.mode & 0o002) !== 0;
    const sticky = (st.mode & 0o1000) !== 0;
    // A sticky world-writable ancestor (/tmp) lets nobody else replace what Warden's user owns in it.
    if (worldWritable && !(ancestor && sticky)) {
      out.push({ id: 'plugins.world-writable', severity: 'critical', message: `plugin ${p.id}: ${what} ${file} is writable by every local user, who can then run code inside Warden`, fix: `chmod o-w ${file}` });
    }
    if (st.uid !== uid && st.uid !== 0) {
      out.push({ id: 'plugins.foreign-owner', severity: 'critical', message: `plugin ${p.id}: ${what} ${file} is owned by uid ${st.uid}, not by Warden's user (uid ${uid}) or root; that user can change code that runs inside Warden`, fix: `chown ${uid} ${file} (and its contents), or move the plugin somewhere only Warden's user can write` });
    }
  };
  check(p.dir, 'the plugin folder');
  for (const e of p.entries) check(e, 'the entry module');
  if (p.origin === 'path') check(p.root, 'the plugins folder');
  for (let dir = path.dirname(p.root); ; dir = path.dirname(dir)) {
    check(dir, 'a folder above it', true);
    if (path.dirname(dir) === dir) break;
  }
  return out;
}

/**
 * Each before_tool_call handler that sees exec, called once with a harmless exec call: one that
 * returns different params rewrites exec arguments. Handlers that throw or time out are left to
 * the call chain (which blocks the call) and reported as such.
 */
async function execRewriters(runtime: PluginRuntime): Promise<AuditFinding[]> {
  const out: AuditFinding[] = [];
  for (const p of runtime.plugins) {
    if (p.status !== 'loaded' || !p.hooks.some((h) => h.name === 'before_tool_call' && (!h.toolMatcher || h.toolMatcher.includes('exec')))) continue;
    const params = { command: EXEC_PROBE_COMMAND };
    const ctx: HookToolContext = { toolName: 'exec', toolCallId: 'audit-probe', agentId: 'main', sessionKey: 'audit', channel: 'web', channelId: 'web', senderIsOwner: false };
    const outcome = await runtime.hooks.probe('before_tool_call', p.id, { toolName: 'exec', toolCallId: 'audit-probe', params, agentId: 'main', sessionKey: 'audit', provider: 'web' }, ctx, 2_000);
    for (const r of outcome) {
      const result = r.result as { params?: Record<string, unknown> } | undefined;
      if (r.error !== undefined) {
        out.push({ id: 'plugins.hook-fails', severity: 'warn', message: `plugin ${p.id}: its before_tool_call handler failed on a plain exec call (${r.error}); every exec call it sees is blocked`, fix: 'fix the plugin, or disable it' });
      } else if (result && typeof result === 'object' && result.params && typeof result.params === 'object' && JSON.stringify({ ...params, ...result.params }) !== JSON.stringify(params)) {
        out.push({
          id: 'plugins.exec-rewrite',
          severity: 'warn',
          message: `plugin ${p.id} rewrites exec arguments in before_tool_call (a plain "${EXEC_PROBE_COMMAND}" came back as ${JSON.stringify(result.params)}): the command that runs is not the one the model asked for and the transcript shows`,
          fix: 'have the hook block or ask for approval instead of rewriting, or disable the plugin',
        });
      }
    }
  }
  return out;
}
