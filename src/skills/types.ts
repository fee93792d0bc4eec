/**
 * Skill roots, lowest to highest precedence. A same-named skill in a later tier overrides an
 * earlier one; within the workspace tier `<workspace>/skills` beats `<workspace>/.agents/skills`.
 */
export const SKILL_SOURCES = ['extra', 'bundled', 'managed', 'personal', 'workspace'] as const;
export type SkillSource = (typeof SKILL_SOURCES)[number];

/** One directory that may hold skill folders (or be a skill folder itself). */
export interface SkillRoot {
  source: SkillSource;
  /** Absolute directory. It may not exist; a missing root is simply empty. */
  dir: string;
}

/** `requires` of the `openclaw`/`warden` metadata object; every list is present, maybe empty. */
export interface SkillRequirements {
  bins: string[];
  anyBins: string[];
  env: string[];
  /** Dotted paths in the Warden config that must be truthy. */
  config: string[];
}

/** The gating metadata an OpenClaw or Warden skill carries in its frontmatter. */
export interface SkillMetadata {
  always: boolean;
  /** Config key of `skills.entries.<key>`; defaults to the skill name. */
  skillKey?: string;
  primaryEnv?: string;
  emoji?: string;
  homepage?: string;
  /** Platforms (`process.platform` names) the skill runs on; empty = any. */
  os: string[];
  requires: SkillRequirements;
}

/** What a SKILL.md says about itself, after frontmatter parsing and validation. */
export interface SkillDefinition {
  name: string;
  description: string;
  /** Exposed as a slash command (default true). */
  userInvocable: boolean;
  /** Kept out of the model's catalog when true (default false). */
  disableModelInvocation: boolean;
  /** `command-dispatch: tool` sends the slash command straight to `commandTool`. */
  commandDispatch?: { kind: 'tool'; tool: string; argMode: 'raw' };
  metadata: SkillMetadata;
}

/** A skill found on disk. */
export interface LoadedSkill extends SkillDefinition {
  /** Absolute path of SKILL.md — what the model reads. */
  location: string;
  /** The skill's folder (parent of SKILL.md). */
  baseDir: string;
  root: SkillRoot;
  /** sha256 of the SKILL.md bytes; part of the snapshot fingerprint. */
  contentHash: string;
  /**
   * The folder is one an agent can write (a workspace root, or a real path inside any agent's
   * workspace): its name, description and instructions are untrusted data (trust.ts).
   */
  agentWritable: boolean;
}

/** A file or root that could not be used; reported, never fatal to discovery. */
export interface SkillLoadError {
  file: string;
  error: string;
}

/** A lower-precedence skill hidden by a same-named one in a higher root. */
export interface OverriddenSkill {
  name: string;
  location: string;
  root: SkillSource;
  overriddenBy: { location: string; root: SkillSource };
}

/**
 * An agent-written skill that was not loaded: it would shadow (by name, case, separators or
 * look-alike letters) a skill the operator put in place, or its name is not plain ASCII.
 */
export interface RefusedSkill {
  name: string;
  location: string;
  root: SkillSource;
  why: string;
  /** The trusted skill it would have shadowed, when that is the reason. */
  shadows?: { name: string; location: string; root: SkillSource };
}

export interface SkillDiscovery {
  /** One record per name, the highest-precedence one; sorted by name. */
  skills: LoadedSkill[];
  overridden: OverriddenSkill[];
  /** Agent-written skills refused (see RefusedSkill); the trusted one they named stays. */
  refused: RefusedSkill[];
  errors: SkillLoadError[];
}

/** Bounds on a scan, so that a huge or hostile root cannot stall a turn (reference §8.4). */
export interface DiscoveryLimits {
  maxCandidatesPerRoot: number;
  maxSkillsLoadedPerSource: number;
  maxSkillFileBytes: number;
}

export const DEFAULT_DISCOVERY_LIMITS: DiscoveryLimits = {
  maxCandidatesPerRoot: 300,
  maxSkillsLoadedPerSource: 200,
  maxSkillFileBytes: 256_000,
};

/** Bounds on the prompt catalog (`skills.limits`). */
export interface PromptLimits {
  maxSkillsInPrompt: number;
  maxSkillsPromptChars: number;
}

export const DEFAULT_PROMPT_LIMITS: PromptLimits = { maxSkillsInPrompt: 150, maxSkillsPromptChars: 18_000 };
