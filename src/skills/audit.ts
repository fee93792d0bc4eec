import type { WardenConfig } from '../config/index.js';
import type { AuditFinding } from '../config/audit-finding.js';
import { knownAgentIds } from '../policy/steps.js';
import { ignoredDispatches, refusedCommands, refusedCommandWarning } from './commands.js';
import { takeSkillSnapshot, type SnapshotOptions } from './snapshot.js';
import { agentWritableDirs, isInsideAny } from './trust.js';

/** Built-in command names (the gateway's list), passed in so this module stays below the gateway. */
export interface SkillAuditInput extends SnapshotOptions {
  reservedCommands?: readonly string[];
}

/**
 * `warden audit` findings about skills, for every agent: agent-written skills refused for
 * shadowing a trusted one (or for a non-ASCII name), agent-written skills named like a built-in
 * command, and skill roots of a trusted tier (`skills.extraDirs`, plugin, managed, personal)
 * that resolve into an agent's workspace — their skills are loaded as untrusted data, which is
 * rarely what the operator meant by listing them. Each finding once, whichever agents share it.
 */
export function auditSkills(config: WardenConfig, input: SkillAuditInput): AuditFinding[] {
  const findings = new Map<string, AuditFinding>();
  const add = (f: AuditFinding) => findings.set(`${f.id}\u0000${f.message}`, f);
  const writable = agentWritableDirs(config, input.baseDir);
  for (const agentId of knownAgentIds(config)) {
    const snapshot = takeSkillSnapshot(config, agentId, input);
    if (!snapshot.ok) continue;
    const s = snapshot.value;
    for (const r of s.refused) {
      add({
        id: r.shadows ? 'skills.agent-written-shadow' : 'skills.agent-written-name',
        severity: 'warn',
        message: `skill "${r.name}" at ${r.location} (agent ${agentId}) ${r.why.replace(/^refused: /, 'was refused: ')}`,
        fix: r.shadows
          ? `remove or rename ${r.location}; to change the ${r.shadows.root} skill, edit it where the operator keeps it`
          : `rename the skill in ${r.location} with ASCII letters, digits and hyphens`,
      });
    }
    for (const r of refusedCommands(s.eligible, input.reservedCommands ?? [])) {
      add({ id: 'skills.agent-written-builtin-name', severity: 'warn', message: refusedCommandWarning(r), fix: `rename the skill in ${r.location}` });
    }
    for (const message of ignoredDispatches(s.eligible)) {
      add({ id: 'skills.agent-written-dispatch', severity: 'warn', message, fix: 'move the skill where only the operator writes if its command should run the tool' });
    }
    // Roots listed by the operator (not the workspace tier) that an agent can write into.
    for (const root of s.roots) {
      if (root.source === 'workspace' || !isInsideAny(root.dir, writable)) continue;
      add({
        id: 'skills.trusted-root-agent-writable',
        severity: 'warn',
        message: `${root.source} skill root ${root.dir} is inside an agent's workspace: its skills are loaded as untrusted data and can never shadow a bundled or managed skill`,
        fix: 'move the skills out of the workspace into a folder only the operator writes, or list them as workspace skills',
      });
    }
  }
  return [...findings.values()];
}
