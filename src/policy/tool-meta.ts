import type { ProfileId } from '../config/schema/policy.js';

export const SECTION_IDS = [
  'fs',
  'runtime',
  'web',
  'memory',
  'sessions',
  'ui',
  'messaging',
  'automation',
  'nodes',
  'agents',
  'media',
  'secrets',
] as const;
export type SectionId = (typeof SECTION_IDS)[number];

/**
 * Where a tool comes from; plugin and MCP tools join groups by their origin. An MCP `placeholder`
 * stands for the tools of a server that has not listed them yet (`<server>__*`): it is never
 * available, so `/tools` can say why the server's tools are missing.
 */
export type ToolSource = { kind: 'core' } | { kind: 'plugin'; pluginId: string } | { kind: 'mcp'; server: string; placeholder?: true };

/** What the policy knows about a tool: identity and membership, never its implementation. */
export interface ToolMeta {
  id: string;
  label: string;
  description: string;
  section: SectionId | 'plugins';
  profiles: readonly ProfileId[];
  /** Member of `group:warden` (alias `group:openclaw`). */
  inWardenGroup: boolean;
  /** Only owners may see or call it (cron, gateway, nodes). */
  ownerOnly: boolean;
  source: ToolSource;
}

/** Why a tool cannot be offered on this machine or in this configuration. */
export type Availability = { ok: true } | { ok: false; why: string };
