import type { LoadedSkill } from './types.js';

export const SKILL_COMMAND_MAX_LENGTH = 32;

/** A user-invocable skill as a slash command. */
export interface SkillCommandSpec {
  /** Command name without the slash: sanitised, unique, at most 32 characters. */
  name: string;
  skillName: string;
  /** The skill's description (its name when it has none): what the command pickers show. */
  description: string;
  location: string;
  /** False for `disable-model-invocation`: the model's catalog does not list the skill. */
  modelInvocable: boolean;
  /** `command-dispatch: tool`: the command's raw argument text goes straight to this tool. */
  dispatch?: { tool: string; argMode: 'raw' };
  /** The reserved (built-in) name the skill's own name gave, which it lost to the built-in. */
  shadowedBuiltin?: string;
  /** The SKILL.md is in a folder an agent can write: its command runs it as untrusted content. */
  agentWritable?: boolean;
}

/** An agent-written skill whose name is a built-in command's: it gets no command at all. */
export interface RefusedCommand {
  skillName: string;
  location: string;
  builtin: string;
}

/**
 * Slash commands for the user-invocable skills (reference §8.1). Names are lower-cased, reduced
 * to `a-z 0-9 _`, capped at 32 characters, and made unique against the reserved names (the
 * built-in commands, which always win) and each other with `_2` … `_999` suffixes. Trusted
 * skills are named first, so an agent-written skill never takes the name a trusted one would
 * get, and an agent-written skill named like a built-in gets no command (`refusedCommands`)
 * rather than a suffixed look-alike of it (`/approve_2`).
 */
export function skillCommandSpecs(skills: readonly LoadedSkill[], reserved: Iterable<string> = []): SkillCommandSpec[] {
  const builtins = new Set([...reserved].map((n) => n.toLowerCase()));
  const used = new Set(builtins);
  const specs: SkillCommandSpec[] = [];
  const ordered = [...skills.filter((s) => !s.agentWritable), ...skills.filter((s) => s.agentWritable)];
  for (const skill of ordered) {
    if (!skill.userInvocable) continue;
    const base = sanitizeCommandName(skill.name);
    if (skill.agentWritable && builtins.has(base)) continue;
    const name = uniqueName(base, used);
    used.add(name);
    specs.push({
      name,
      skillName: skill.name,
      description: skill.description.trim() || skill.name,
      location: skill.location,
      modelInvocable: !skill.disableModelInvocation,
      // An agent-written file does not choose a tool for a person's typed text: its command is a
      // model turn with the file as untrusted data (`ignoredDispatches`).
      ...(skill.commandDispatch && !skill.agentWritable ? { dispatch: { tool: skill.commandDispatch.tool, argMode: skill.commandDispatch.argMode } } : {}),
      ...(builtins.has(base) ? { shadowedBuiltin: base } : {}),
      ...(skill.agentWritable ? { agentWritable: true } : {}),
    });
  }
  return specs;
}

/** Agent-written user-invocable skills named like a built-in command, which get no command. */
export function refusedCommands(skills: readonly LoadedSkill[], reserved: Iterable<string> = []): RefusedCommand[] {
  const builtins = new Set([...reserved].map((n) => n.toLowerCase()));
  return skills
    .filter((s) => s.agentWritable && s.userInvocable && builtins.has(sanitizeCommandName(s.name)))
    .map((s) => ({ skillName: s.name, location: s.location, builtin: sanitizeCommandName(s.name) }));
}

/** What the operator is told about each agent-written skill whose `command-dispatch: tool` is not honoured. */
export function ignoredDispatches(skills: readonly LoadedSkill[]): string[] {
  return skills
    .filter((s) => s.agentWritable && s.userInvocable && s.commandDispatch)
    .map((s) => `skill "${s.name}" (${s.location}) is in a folder an agent can write: its command-dispatch to ${s.commandDispatch!.tool} is not honoured; its command is a model turn with the file as untrusted data`);
}

/** What the operator is told about an agent-written skill named like a built-in. */
export function refusedCommandWarning(r: RefusedCommand): string {
  return `skill "${r.skillName}" (${r.location}) is in a folder an agent can write and is named like the built-in /${r.builtin}: it gets no slash command`;
}

/** What the operator is told about a skill whose command name a built-in command took. */
export function shadowedWarning(spec: SkillCommandSpec): string | undefined {
  if (!spec.shadowedBuiltin) return undefined;
  return `skill "${spec.skillName}": /${spec.shadowedBuiltin} is a built-in command, which wins; the skill's command is /${spec.name}`;
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

/** `release-notes`, `release_notes`, `Release Notes` → `release-notes`: how a typed word is compared. */
const lookupForm = (value: string) => value.trim().toLowerCase().replace(/[\s_]+/g, '-');

/**
 * The skill command a typed word names: the command name itself, else the skill's name, else
 * either with `-` and `_` (and spaces) taken as one (`/release-notes` finds `/release_notes`),
 * as OpenClaw's `/skill <name>` lookup does. Exact matches win over loose ones.
 */
export function findSkillCommand(specs: readonly SkillCommandSpec[], word: string): SkillCommandSpec | undefined {
  const lowered = word.trim().toLowerCase();
  if (!lowered) return undefined;
  const loose = lookupForm(lowered);
  return (
    specs.find((s) => s.name === lowered) ??
    specs.find((s) => s.skillName.toLowerCase() === lowered) ??
    specs.find((s) => lookupForm(s.name) === loose || lookupForm(s.skillName) === loose)
  );
}

function uniqueName(base: string, used: ReadonlySet<string>): string {
  if (!used.has(base)) return base;
  for (let i = 2; i <= 999; i++) {
    const suffix = `_${i}`;
    const candidate = `${base.slice(0, SKILL_COMMAND_MAX_LENGTH - suffix.length)}${suffix}`;
    if (!used.has(candidate)) return candidate;
  }
  // OpenClaw's last resort; a thousand skills of one name do not reach it in practice.
  return `${base.slice(0, SKILL_COMMAND_MAX_LENGTH - 2)}_x`;
}
