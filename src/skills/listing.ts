import type { WardenConfig } from '../config/index.js';
import { takeSkillSnapshot, type SkillSnapshot, type SnapshotOptions } from './snapshot.js';
import type { SkillLoadError, SkillRoot, SkillSource } from './types.js';

export interface ListedSkill {
  name: string;
  /** The tier the skill was found in. */
  root: SkillSource;
  /** Absolute SKILL.md path. */
  location: string;
  description: string;
  /** In a folder an agent can write: shown to the model as untrusted data. */
  agentWritable: boolean;
  userInvocable: boolean;
  /** False when `disable-model-invocation` keeps it out of the model's catalog. */
  modelInvocable: boolean;
  emoji?: string;
}

export interface UnlistedSkill {
  name: string;
  root: SkillSource;
  location: string;
  description: string;
  why: string;
}

/** What `warden skills` and `/skills` show: nothing found is left out without a reason. */
export interface SkillListing {
  agentId: string;
  workspace: string;
  roots: SkillRoot[];
  eligible: ListedSkill[];
  /** Ineligible skills, lower-precedence copies hidden by a same-named skill, and refused agent-written ones. */
  ineligible: UnlistedSkill[];
  errors: SkillLoadError[];
}

export type ListingResult = { ok: true; value: SkillListing } | { ok: false; error: string };

/** The skills of an agent (default agent when `agentId` is undefined), scanned now. */
export function listSkills(config: WardenConfig, agentId: string | undefined, options: SnapshotOptions): ListingResult {
  const snapshot = takeSkillSnapshot(config, agentId, options);
  return snapshot.ok ? { ok: true, value: listingFromSnapshot(snapshot.value) } : snapshot;
}

/** The listing of a snapshot a session already holds. */
export function listingFromSnapshot(snapshot: SkillSnapshot): SkillListing {
  return {
    agentId: snapshot.agentId,
    workspace: snapshot.workspace,
    roots: snapshot.roots,
    eligible: snapshot.eligible.map((s) => ({
      name: s.name,
      root: s.root.source,
      location: s.location,
      description: s.description,
      agentWritable: s.agentWritable,
      userInvocable: s.userInvocable,
      modelInvocable: !s.disableModelInvocation,
      ...(s.metadata.emoji ? { emoji: s.metadata.emoji } : {}),
    })),
    ineligible: [
      ...snapshot.ineligible.map((s) => ({ name: s.name, root: s.root.source, location: s.location, description: s.description, why: s.why })),
      ...snapshot.overridden.map((o) => ({
        name: o.name,
        root: o.root,
        location: o.location,
        description: '',
        why: `overridden by the ${o.overriddenBy.root} skill at ${o.overriddenBy.location}`,
      })),
      ...snapshot.refused.map((r) => ({ name: r.name, root: r.root, location: r.location, description: '', why: r.why })),
    ].sort((a, b) => a.name.localeCompare(b.name, 'en') || a.location.localeCompare(b.location, 'en')),
    errors: snapshot.errors,
  };
}
