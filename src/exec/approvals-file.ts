import type { ExecConfig } from '../config/schema/exec.js';
import type { AddEntryInput, StoredAllowlistEntry } from './allowlist-store.js';
import type { BoundFile } from './content-binding.js';
import { isRecord } from '../util/guards.js';
import { argPatternProblem } from '../config/arg-pattern.js';

/**
 * OpenClaw's `exec-approvals.json` (reference A4, tool-system §6.3), read and written so an
 * operator can carry allowlists between OpenClaw and Warden. Pure: the caller reads or writes
 * the file and the store.
 *
 * Only allowlists are imported. Policy fields (`security`, `ask`, `askFallback`,
 * `autoAllowSkills`) are reported, not applied: Warden's policy is `tools.exec` in the config,
 * and an imported file must not be able to loosen it.
 */
export interface ImportedEntry extends AddEntryInput {
  agentId: string;
}

export interface ImportResult {
  entries: ImportedEntry[];
  /** What was dropped or changed, each naming its JSON path. */
  notes: string[];
}

const POLICY_KEYS = ['security', 'ask', 'askFallback', 'autoAllowSkills'] as const;

export function parseApprovalsFile(doc: unknown): ImportResult {
  const notes: string[] = [];
  if (!isRecord(doc) || doc.version !== 1) {
    return { entries: [], notes: ['version: expected 1; the file is treated as empty (as OpenClaw does)'] };
  }
  if (isRecord(doc.defaults)) {
    for (const key of POLICY_KEYS) if (key in doc.defaults) notes.push(`defaults.${key}: not imported; set tools.exec.${key} in the config`);
  }
  const agents = isRecord(doc.agents) ? doc.agents : {};
  const byAgent = new Map<string, ImportedEntry[]>();
  // `main` before `default`, so main's entries win when both name the same pattern.
  const ordered = Object.entries(agents).sort(([a], [b]) => (a === 'default' ? 1 : 0) - (b === 'default' ? 1 : 0));
  for (const [agentId, agent] of ordered) {
    if (!isRecord(agent)) {
      notes.push(`agents.${agentId}: not an object, skipped`);
      continue;
    }
    for (const key of POLICY_KEYS) if (key in agent) notes.push(`agents.${agentId}.${key}: not imported; Warden's policy is tools.exec`);
    const list = Array.isArray(agent.allowlist) ? agent.allowlist : [];
    // `agents.default` is OpenClaw's old name for `main`; main's own entries win on duplicates.
    const target = agentId === 'default' ? 'main' : agentId;
    const entries = byAgent.get(target) ?? [];
    list.forEach((raw: unknown, i: number) => {
      const at = `agents.${agentId}.allowlist[${i}]`;
      const entry = typeof raw === 'string' ? { pattern: raw } : isRecord(raw) ? raw : null;
      const pattern = typeof entry?.pattern === 'string' ? entry.pattern.trim() : '';
      if (!entry || pattern === '') {
        notes.push(`${at}: no pattern, dropped`);
        return;
      }
      let argPattern = typeof entry.argPattern === 'string' && entry.argPattern !== '' ? entry.argPattern : undefined;
      if (argPattern !== undefined && !argPattern.startsWith('^') && !argPattern.includes('\x00')) {
        // OpenClaw tests an unanchored regex; Warden reads a plain argPattern as a glob. Anchoring
        // at the start keeps it a regex and can only narrow what it matched.
        notes.push(`${at}.argPattern: "${argPattern}" anchored as "^(?:${argPattern})"`);
        argPattern = `^(?:${argPattern})`;
      }
      const problem = argPattern === undefined ? undefined : argPatternProblem(argPattern);
      if (problem !== undefined) {
        notes.push(`${at}.argPattern: ${problem}; entry dropped`);
        return;
      }
      const duplicate = entries.some((e) => e.pattern === pattern && e.argPattern === argPattern);
      if (duplicate) return;
      // Warden's own export carries what an allow-always grant bound by content; it travels with it.
      let boundFiles: BoundFile[] | undefined;
      if ('boundFiles' in entry) {
        if (!Array.isArray(entry.boundFiles) || !entry.boundFiles.every(isBoundFile)) {
          notes.push(`${at}.boundFiles: not a list of {path, realPath, sha256}, entry dropped`);
          return;
        }
        boundFiles = entry.boundFiles;
      }
      entries.push({
        agentId: target,
        pattern,
        argPattern,
        source: entry.source === 'allow-always' ? 'allow-always' : 'import',
        lastUsedAt: typeof entry.lastUsedAt === 'number' ? entry.lastUsedAt : undefined,
        lastUsedCommand: typeof entry.lastUsedCommand === 'string' ? entry.lastUsedCommand : undefined,
        lastResolvedPath: typeof entry.lastResolvedPath === 'string' ? entry.lastResolvedPath : undefined,
        ...(boundFiles !== undefined ? { boundFiles } : {}),
      });
    });
    byAgent.set(target, entries);
  }
  return { entries: [...byAgent.values()].flat(), notes };
}

export interface ApprovalsFileDoc {
  version: 1;
  defaults: { security: string; ask: string; askFallback: string };
  agents: Record<string, { allowlist: Array<Record<string, unknown>> }>;
}

/** Live stored entries in OpenClaw's shape, with the config's policy as `defaults`. */
export function buildApprovalsFile(entries: readonly StoredAllowlistEntry[], exec: ExecConfig, now: number): ApprovalsFileDoc {
  const agents: ApprovalsFileDoc['agents'] = {};
  for (const e of entries) {
    if (e.expiresAt !== undefined && e.expiresAt <= now) continue;
    const agent = (agents[e.agentId] ??= { allowlist: [] });
    agent.allowlist.push({
      id: e.id,
      pattern: e.pattern,
      ...(e.argPattern !== undefined ? { argPattern: e.argPattern } : {}),
      source: e.source,
      ...(e.lastUsedAt !== undefined ? { lastUsedAt: e.lastUsedAt } : {}),
      ...(e.lastUsedCommand !== undefined ? { lastUsedCommand: e.lastUsedCommand } : {}),
      ...(e.lastResolvedPath !== undefined ? { lastResolvedPath: e.lastResolvedPath } : {}),
      ...(e.boundFiles !== undefined && e.source === 'allow-always' ? { boundFiles: e.boundFiles } : {}),
    });
  }
  return { version: 1, defaults: { security: exec.security, ask: exec.ask, askFallback: exec.askFallback }, agents };
}



function isBoundFile(v: unknown): v is BoundFile {
  return isRecord(v) && typeof v.path === 'string' && (v.realPath === null || typeof v.realPath === 'string') && (v.sha256 === null || typeof v.sha256 === 'string');
}
