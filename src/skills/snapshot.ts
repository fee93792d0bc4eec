import { createHash } from 'node:crypto';
import type { WardenConfig } from '../config/index.js';
import { discoverSkills } from './discover.js';
import { binLookup, evaluateEligibility } from './eligibility.js';
import { resolveSkillRoots, type SkillRootOptions } from './roots.js';
import type { DiscoveryLimits, LoadedSkill, OverriddenSkill, RefusedSkill, SkillLoadError, SkillRoot } from './types.js';
import { SkillRootWatcher, WATCH_DEBOUNCE_MS } from './watch.js';
import { stableJson } from '../util/stable-json.js';

/** Bumped when the snapshot's shape or meaning changes, so old fingerprints never match. */
export const SNAPSHOT_FORMAT_VERSION = 2;

export interface IneligibleSkill extends LoadedSkill {
  why: string;
}

/**
 * What one agent's skills are at one moment: eligible skills (sorted by name), ineligible ones
 * with why, copies hidden by a higher root, and files that could not be loaded. The fingerprint
 * covers every input that can change the result — skill file contents, roots, eligibility
 * (environment, PATH, OS) and the `skills` config with secrets reduced to "set" — so two
 * snapshots with one fingerprint give the same catalog.
 */
export interface SkillSnapshot {
  formatVersion: number;
  agentId: string;
  workspace: string;
  roots: SkillRoot[];
  eligible: LoadedSkill[];
  ineligible: IneligibleSkill[];
  overridden: OverriddenSkill[];
  /** Agent-written skills refused: a trusted skill's name, or a name that is not plain ASCII. */
  refused: RefusedSkill[];
  errors: SkillLoadError[];
  fingerprint: string;
  takenAt: number;
}

export interface SnapshotOptions extends SkillRootOptions {
  platform?: string;
  hasBin?: (name: string) => boolean;
  discoveryLimits?: DiscoveryLimits;
  now?: () => number;
}

export type SnapshotResult = { ok: true; value: SkillSnapshot } | { ok: false; error: string };

/** Discovers, merges and gates one agent's skills. The only error is an unknown agent id. */
export function takeSkillSnapshot(config: WardenConfig, agentId: string | undefined, options: SnapshotOptions): SnapshotResult {
  const resolved = resolveSkillRoots(config, agentId, options);
  if (!resolved.ok) return resolved;
  const { roots, workspace } = resolved.value;
  const env = options.env ?? process.env;
  const discovery = discoverSkills(roots, options.discoveryLimits, { writableDirs: resolved.value.writableDirs });
  const ctx = { config, env, platform: options.platform ?? process.platform, hasBin: options.hasBin ?? binLookup(env) };

  const eligible: LoadedSkill[] = [];
  const ineligible: IneligibleSkill[] = [];
  for (const skill of discovery.skills) {
    const verdict = evaluateEligibility(skill, ctx);
    if (verdict.eligible) eligible.push(skill);
    else ineligible.push({ ...skill, why: verdict.why });
  }

  const fingerprint = sha256(
    stableJson({
      formatVersion: SNAPSHOT_FORMAT_VERSION,
      agentId: resolved.value.agentId,
      workspace,
      roots,
      eligible: eligible.map((s) => [s.name, s.location, s.contentHash, s.agentWritable]),
      ineligible: ineligible.map((s) => [s.name, s.location, s.contentHash, s.why]),
      overridden: discovery.overridden.map((o) => [o.name, o.location]),
      refused: discovery.refused.map((r) => [r.name, r.location, r.why]),
      errors: discovery.errors,
      skillsConfig: redactSkillsConfig(config.skills),
    }),
  );
  return {
    ok: true,
    value: {
      formatVersion: SNAPSHOT_FORMAT_VERSION,
      agentId: resolved.value.agentId,
      workspace,
      roots,
      eligible,
      ineligible,
      overridden: discovery.overridden,
      refused: discovery.refused,
      errors: discovery.errors,
      fingerprint,
      takenAt: (options.now ?? Date.now)(),
    },
  };
}

export interface SessionSnapshotsOptions extends SnapshotOptions {
  /** Watch the roots and refresh after changes (default true). */
  watch?: boolean;
  debounceMs?: number;
  /** Snapshots kept per (agent, config, file version); least recently used go first. */
  maxSnapshots?: number;
  /** Sessions remembered; a forgotten session simply takes the current snapshot. */
  maxSessions?: number;
}

/**
 * Per-session skill snapshots. A session keeps the snapshot it was given — and so a byte-stable
 * catalog in its system prompt — until a skill file changes (seen by the watcher, debounced) or
 * the relevant config changes; then the next `forSession` takes a new snapshot, and the session
 * moves to it only if its fingerprint differs. Call `close()` to stop the watcher.
 */
export class SessionSkillSnapshots {
  private fileVersion = 0;
  private readonly snapshots = new Map<string, SkillSnapshot>();
  private readonly sessions = new Map<string, SkillSnapshot>();
  private readonly watcher: SkillRootWatcher | undefined;
  private readonly listeners = new Set<(version: number) => void>();

  constructor(
    private config: WardenConfig,
    private readonly options: SessionSnapshotsOptions,
  ) {
    if (options.watch !== false) {
      this.watcher = new SkillRootWatcher(() => this.invalidate(), options.debounceMs ?? WATCH_DEBOUNCE_MS);
    }
  }

  /** Bumped after each debounced burst of file changes (and by `invalidate`). */
  get version(): number {
    return this.fileVersion;
  }

  /** Resolves when the watcher has finished its initial scan (immediately without a watcher). */
  async ready(): Promise<void> {
    await this.watcher?.ready();
  }

  /** A config reload: snapshots taken under the old config are not reused. */
  setConfig(config: WardenConfig): void {
    this.config = config;
  }

  /** The config's part of a snapshot key, serialised once per config object (not once per turn). */
  private configKey: { config: WardenConfig; text: string } | undefined;

  private keyOfConfig(): string {
    if (this.configKey?.config !== this.config) {
      this.configKey = { config: this.config, text: stableJson([redactSkillsConfig(this.config.skills), this.config.agents, this.config.dataDir]) };
    }
    return this.configKey.text;
  }

  /** Forces the next `forSession` calls to rescan, as a file change would. */
  invalidate(): void {
    this.fileVersion++;
    for (const listener of this.listeners) listener(this.fileVersion);
  }

  /** Called after each invalidation with the new version; returns an unsubscribe function. */
  onChange(listener: (version: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  forSession(sessionKey: string, agentId: string | undefined): SnapshotResult {
    const key = `${stableJson([agentId ?? null, this.fileVersion])}${this.keyOfConfig()}`;
    let current = this.snapshots.get(key);
    if (current) {
      this.snapshots.delete(key);
    } else {
      const taken = takeSkillSnapshot(this.config, agentId, this.options);
      if (!taken.ok) return taken;
      current = taken.value;
      this.watcher?.watchRoots(current.roots.map((r) => r.dir));
    }
    this.snapshots.set(key, current);
    trim(this.snapshots, this.options.maxSnapshots ?? 10);

    const previous = this.sessions.get(sessionKey);
    const chosen = previous && previous.fingerprint === current.fingerprint ? previous : current;
    this.sessions.delete(sessionKey);
    this.sessions.set(sessionKey, chosen);
    trim(this.sessions, this.options.maxSessions ?? 1000);
    return { ok: true, value: chosen };
  }

  /** Drops a session's snapshot (session reset or end). */
  forget(sessionKey: string): void {
    this.sessions.delete(sessionKey);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.watcher?.close();
  }
}

/** The `skills` config with secret values replaced by whether they are set. */
function redactSkillsConfig(skills: WardenConfig['skills']): unknown {
  return {
    ...skills,
    entries: Object.fromEntries(
      Object.entries(skills.entries).map(([name, entry]) => [
        name,
        {
          ...entry,
          ...(entry.apiKey !== undefined ? { apiKey: entry.apiKey.trim() ? 'set' : 'empty' } : {}),
          ...(entry.env ? { env: Object.fromEntries(Object.entries(entry.env).map(([k, v]) => [k, v.trim() ? 'set' : 'empty'])) } : {}),
        },
      ]),
    ),
  };
}

/** JSON with object keys sorted, so equal values always give equal text. */

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function trim<K, V>(map: Map<K, V>, max: number): void {
  while (map.size > max) {
    const oldest = map.keys().next().value as K;
    map.delete(oldest);
  }
}
