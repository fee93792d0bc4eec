/**
 * Skills: SKILL.md folders that teach the model workflows. Discovery over ranked roots,
 * frontmatter compatible with OpenClaw, eligibility gating, per-session snapshots refreshed on
 * file changes, and the `<available_skills>` block of the system prompt.
 */
export { buildSkillsPrompt, escapeXml, type CatalogSkill, type DropReason, type SkillsPrompt } from './catalog.js';
export {
  findSkillCommand,
  ignoredDispatches,
  refusedCommands,
  refusedCommandWarning,
  sanitizeCommandName,
  shadowedWarning,
  skillCommandSpecs,
  type RefusedCommand,
  type SkillCommandSpec,
} from './commands.js';
export { discoverSkills, type DiscoveryOptions } from './discover.js';
export { agentNameProblem, agentWritableDirs, skillNameKey } from './trust.js';
export { binLookup, configPathTruthy, evaluateEligibility, type Eligibility, type EligibilityContext } from './eligibility.js';
export { parseSkillMarkdown, skillInstructions } from './frontmatter.js';
export { listingFromSnapshot, listSkills, type ListedSkill, type ListingResult, type SkillListing, type UnlistedSkill } from './listing.js';
export { BUNDLED_SKILLS_DIR, resolveSkillRoots, type AgentSkillRoots, type SkillRootOptions } from './roots.js';
export {
  SessionSkillSnapshots,
  SNAPSHOT_FORMAT_VERSION,
  takeSkillSnapshot,
  type IneligibleSkill,
  type SessionSnapshotsOptions,
  type SkillSnapshot,
  type SnapshotOptions,
  type SnapshotResult,
} from './snapshot.js';
export * from './types.js';
export { SkillRootWatcher, WATCH_DEBOUNCE_MS } from './watch.js';
export { sessionSkillsCatalog } from './session-catalog.js';
