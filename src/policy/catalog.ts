import type { ProfileId } from '../config/schema/policy.js';
import { SECTION_IDS, type SectionId, type ToolMeta } from './tool-meta.js';

/**
 * The core tool catalog (semantics §1): what each tool is, where it is listed, which built-in
 * profiles name it and whether `group:warden` includes it. Definitions only: whether a tool can be
 * offered here is the implementation registry's business (`core/index.ts`).
 */

export const SECTION_LABELS: Readonly<Record<SectionId, string>> = {
  fs: 'Files',
  runtime: 'Runtime',
  web: 'Web',
  memory: 'Memory',
  sessions: 'Sessions',
  ui: 'UI',
  messaging: 'Messaging',
  automation: 'Automation',
  nodes: 'Nodes',
  agents: 'Agents',
  media: 'Media',
  secrets: 'Secrets',
};

/** Tools only an owner may see or call (semantics §3). */
export const OWNER_ONLY_TOOLS: readonly string[] = ['cron', 'gateway', 'nodes', 'conversations_list', 'conversations_send', 'conversations_turn'];

type Row = [id: string, label: string, section: SectionId, profiles: ProfileId[], inWardenGroup: boolean, description: string];

const C: ProfileId[] = ['coding'];
const CM: ProfileId[] = ['coding', 'messaging'];

// Catalog order = display order within a section.
const ROWS: Row[] = [
  ['read', 'Read', 'fs', C, false, 'Read a file in the workspace, a page of lines at a time.'],
  ['write', 'Write', 'fs', C, false, 'Create or overwrite a file in the workspace.'],
  ['edit', 'Edit', 'fs', C, false, 'Replace one exact, unique span of text in a workspace file.'],
  ['apply_patch', 'Apply Patch', 'fs', C, false, 'Apply a multi-file patch in the "*** Begin Patch" format.'],
  ['exec', 'Exec', 'runtime', C, false, 'Run a shell command under the exec policy (allowlist, approvals, sandbox).'],
  ['process', 'Process', 'runtime', C, false, 'List, poll, read, write to and kill background commands of this session.'],
  ['web_search', 'Web Search', 'web', C, true, 'Search the web and return titles, links and snippets.'],
  ['web_fetch', 'Web Fetch', 'web', C, true, 'Fetch a public web page and return its readable content.'],
  ['memory_search', 'Memory Search', 'memory', C, true, "Search the agent's memory notes."],
  ['memory_get', 'Memory Get', 'memory', C, true, 'Read a memory note by path.'],
  ['sessions_list', 'Sessions List', 'sessions', CM, true, 'List sessions this agent can see.'],
  ['sessions_history', 'Sessions History', 'sessions', CM, true, "Read another session's transcript."],
  ['sessions_search', 'Sessions Search', 'sessions', CM, true, 'Search the transcripts this session may read for words, best match first.'],
  ['conversations_list', 'Conversations List', 'sessions', CM, true, 'List the channels, threads and DMs the bot can reach, page by page (owner only).'],
  ['conversations_send', 'Conversations Send', 'sessions', CM, true, 'Post a message into one exact channel or DM (owner only).'],
  ['conversations_turn', 'Conversations Turn', 'sessions', CM, true, 'Post into an exact channel or DM and get the next human reply there as a follow-up (owner only).'],
  ['sessions_send', 'Sessions Send', 'sessions', CM, true, 'Send a message into another session.'],
  ['sessions_spawn', 'Sessions Spawn', 'sessions', C, true, 'Start a subagent session for a task.'],
  ['sessions_yield', 'Sessions Yield', 'sessions', C, true, 'End this turn and wait for spawned subagents to report.'],
  ['subagents', 'Subagents', 'sessions', C, true, 'List, steer or stop the subagents this session spawned.'],
  ['session_status', 'Session Status', 'sessions', ['minimal', 'coding', 'messaging'], true, "Show this session's model, usage and state."],
  ['browser', 'Browser', 'ui', [], true, 'Drive a Chromium browser: navigate, snapshot, click, type.'],
  ['message', 'Message', 'messaging', ['messaging'], true, 'Send a message to a chat channel or user.'],
  ['cron', 'Cron', 'automation', C, true, 'Create, list and remove scheduled jobs (owner only).'],
  ['gateway', 'Gateway', 'automation', [], true, "Inspect and control Warden's own gateway (owner only)."],
  ['nodes', 'Nodes', 'nodes', [], true, 'Reach paired devices and remote nodes (owner only).'],
  ['agents_list', 'Agents List', 'agents', [], true, 'List the agents that sessions_spawn may target.'],
  ['progress_card', 'Progress Card', 'agents', C, true, 'Keep one status message in this conversation up to date during a long task, then close it.'],
  ['ask_user', 'Ask User', 'agents', CM, true, 'Ask the person 1-3 questions with buttons (or free text); their answer is the result.'],
  ['image', 'Image', 'media', C, true, 'Describe or analyse an image with the vision model.'],
  ['pdf', 'PDF', 'media', C, true, 'Extract and analyse the text of a PDF document.'],
  ['image_generate', 'Image Generate', 'media', C, true, 'Generate an image from a text prompt.'],
  ['tts', 'TTS', 'media', [], true, 'Turn text into speech audio.'],
  ['secrets', 'Secrets', 'secrets', [], true, 'Ask a person privately for a credential the agent never sees; list or delete stored names.'],
];

const OWNER_ONLY = new Set(OWNER_ONLY_TOOLS);

export const CORE_TOOLS: readonly ToolMeta[] = Object.freeze(
  ROWS.map(([id, label, section, profiles, inWardenGroup, description]) =>
    Object.freeze({ id, label, description, section, profiles, inWardenGroup, ownerOnly: OWNER_ONLY.has(id), source: { kind: 'core' } as const }),
  ),
);

const CORE_BY_ID: ReadonlyMap<string, ToolMeta> = new Map(CORE_TOOLS.map((t) => [t.id, t]));

/** Exact lookup of a canonical (already normalised) core id. */
export function coreTool(id: string): ToolMeta | undefined {
  return CORE_BY_ID.get(id);
}

export function isCoreToolId(id: string): boolean {
  return CORE_BY_ID.has(id);
}

/** Stands for every MCP tool in an allowlist; the coding and messaging profiles include it. */
export const BUNDLE_MCP = 'bundle-mcp';
export const PLUGINS_GROUP = 'group:plugins';
export const WARDEN_GROUP = 'group:warden';
/** OpenClaw's name for `group:warden`. */
export const GROUP_ALIASES: Readonly<Record<string, string>> = Object.freeze({ 'group:openclaw': WARDEN_GROUP });

/** Static groups: `group:<section>` and `group:warden`. Plugin groups are dynamic (see policy/entry.ts). */
export const CORE_GROUPS: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ...SECTION_IDS.map((s) => [`group:${s}`, CORE_TOOLS.filter((t) => t.section === s).map((t) => t.id)] as const),
  [WARDEN_GROUP, CORE_TOOLS.filter((t) => t.inWardenGroup).map((t) => t.id)],
]);

/** The canonical group name for `name` (resolving `group:openclaw`), or undefined when it is no core group. */
export function coreGroupName(name: string): string | undefined {
  const canonical = Object.hasOwn(GROUP_ALIASES, name) ? GROUP_ALIASES[name]! : name;
  return CORE_GROUPS.has(canonical) ? canonical : undefined;
}

/**
 * The allowlist a built-in profile stands for, in catalog order; `bundle-mcp` closes coding and
 * messaging. `full` is no policy at all, so it has no list: undefined.
 */
export function profileAllowlist(profile: ProfileId): readonly string[] | undefined {
  return PROFILE_ALLOWLISTS[profile];
}

const PROFILE_ALLOWLISTS: Readonly<Record<ProfileId, readonly string[] | undefined>> = {
  minimal: CORE_TOOLS.filter((t) => t.profiles.includes('minimal')).map((t) => t.id),
  coding: [...CORE_TOOLS.filter((t) => t.profiles.includes('coding')).map((t) => t.id), BUNDLE_MCP],
  messaging: [...CORE_TOOLS.filter((t) => t.profiles.includes('messaging')).map((t) => t.id), BUNDLE_MCP],
  full: undefined,
};
