import type { ToolMeta } from './tool-meta.js';

/**
 * What a tool can do, in one sentence, for the risk line of an approval card. Written here
 * from the catalog, never taken from the model's text or a tool's self-description (an MCP
 * server or plugin names its own tools; it does not get to describe their danger).
 */
const CORE_RISK: Readonly<Record<string, string>> = Object.freeze({
  read: 'reads files of the workspace',
  write: 'creates or overwrites files in the workspace',
  edit: 'changes files in the workspace',
  apply_patch: 'changes, creates or deletes files in the workspace',
  exec: 'runs a command on the host',
  process: 'drives commands already running on the host',
  web_search: 'sends a query to a search provider',
  web_fetch: 'fetches a URL from this machine',
  memory_search: 'reads the agent’s memory notes',
  memory_get: 'reads the agent’s memory notes',
  sessions_list: 'lists the agent’s sessions',
  sessions_history: 'reads another session’s transcript',
  sessions_search: 'searches the transcripts of the sessions this one may read',
  conversations_list: 'lists the channels, threads and DMs the bot can reach',
  conversations_send: 'posts a message into another channel or DM',
  conversations_turn: 'posts into another channel or DM and reads the next reply there',
  sessions_send: 'sends a message into another session',
  sessions_spawn: 'starts a subagent that can use tools',
  sessions_yield: 'ends the turn to wait for subagents',
  subagents: 'steers or stops subagents',
  session_status: 'reads this session’s state',
  browser: 'drives a browser on this machine',
  message: 'posts to a chat channel or person, or acts on messages there (react, pin, edit or delete its own, read)',
  cron: 'creates or removes scheduled jobs',
  gateway: 'inspects or changes Warden’s own gateway',
  nodes: 'reaches paired devices and remote nodes',
  agents_list: 'lists agents',
  image: 'sends an image to the vision model',
  pdf: 'reads a PDF document',
  image_generate: 'generates an image',
  tts: 'turns text into speech',
  progress_card: 'posts and edits one status message in this conversation',
  ask_user: 'asks the requester a question',
});

/** The risk line of a tool: the catalog's for a core tool, its origin for any other. */
export function toolRisk(id: string, meta?: Pick<ToolMeta, 'source'> | undefined): string {
  if (Object.hasOwn(CORE_RISK, id)) return CORE_RISK[id]!;
  const source = meta?.source;
  if (source?.kind === 'mcp') return `calls a tool of MCP server ${source.server}, which can act outside Warden`;
  if (source?.kind === 'plugin') return `runs code of plugin ${source.pluginId}`;
  const server = mcpServer(id);
  if (server !== undefined) return `calls a tool of MCP server ${server}, which can act outside Warden`;
  return 'runs a tool Warden has no description of';
}

function mcpServer(id: string): string | undefined {
  const at = id.indexOf('__');
  return at > 0 ? id.slice(0, at) : undefined;
}
