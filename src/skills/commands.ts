import type { LoadedSkill } from './types.js';

export const SKILL_COMMAND_MAX_LENGTH = 32;

/** A user-invocable skill as a slash command. */
export interface SkillCommandSpec {
  /** Command name without the slash: sanitised, unique, at most 32 characters. */
  name: string;
  skillName: string;
  description: string;
  location: string;
  /** `command-dispatch: tool`: the command's raw argument text goes straight to this tool. */
  dispatch?: { tool: string; argMode: 'raw' };
}

/**
 * Slash commands for the user-invocable skills (reference §8.1). Names are lower-cased, reduced
 * to `a-z 0-9 _`, capped at 32 characters, and made unique against the reserved names (the
 * built-in commands) and each other with `_2` … `_999` suffixes.
 */
export function skillCommandSpecs(skills: readonly LoadedSkill[], reserved: Iterable<string> = []): SkillCommandSpec[] {
  const used = new Set([...reserved].map((n) => n.toLowerCase()));
  const specs: SkillCommandSpec[] = [];
  for (const skill of skills) {
    if (!skill.userInvocable) continue;
    const name = uniqueName(sanitizeCommandName(skill.name), used);
    if (!name) continue;
    used.add(name);
    specs.push({
      name,
      skillName: skill.name,
      description: skill.description,
      location: skill.location,
      ...(skill.commandDispatch ? { dispatch: { tool: skill.commandDispatch.tool, argMode: skill.commandDispatch.argMode } } : {}),
    });
  }
  return specs;
}

export function sanitizeCommandName(raw: string): string {
  const cleaned = raw
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '')
    .slice(0, SKILL_COMMAND_MAX_LENGTH)
    .replace(/_$/, '');
  return cleaned || 'skill';
}

function uniqueName(base: string, used: ReadonlySet<string>): string | undefined {
  if (!used.has(base)) return base;
  for (let i = 2; i <= 999; i++) {
    const suffix = `_${i}`;
    const candidate = `${base.slice(0, SKILL_COMMAND_MAX_LENGTH - suffix.length)}${suffix}`;
    if (!used.has(candidate)) return candidate;
  }
  return undefined;
}
