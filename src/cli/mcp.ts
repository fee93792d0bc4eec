import { closest } from '../config/errors.js';
import { describeAnnotations } from '../mcp/approval.js';
import type { ServerStatus } from '../mcp/connection.js';
import { connectMcpForCommand, reservedToolNames } from '../mcp/registry.js';
import { createPluginRuntime } from '../plugins/runtime.js';
import { EXIT, type CommandRunner } from './args.js';
import { COMMAND_USAGE } from './usage.js';
import { loadConfigForCommand } from './config.js';
import { unknownFlagProblems } from './context.js';

/**
 * `warden mcp list [--json]`: every server of `mcp.servers` — how it is reached, its state once
 * this command tried to connect (each server at most its connect timeout, 15 s in all), how many
 * tools it lists, its last error and what it left out. `warden mcp tools NAME [--json]`: the
 * server's tools as the surface names them, with their annotations and whether a call asks for
 * approval, and why. Both connect the way `warden start` does and exit 0 whatever the servers'
 * state (a failing server does not stop Warden either); an unknown server name is exit 2.
 */

const FLAGS = ['config', 'json', 'help'];
const USAGE = COMMAND_USAGE.mcp!;

export interface McpListAnswer {
  servers: Array<Omit<ServerStatus, 'connectedAt' | 'retryAt'> & { connectedAt?: string; retryAt?: string }>;
}

export const run: CommandRunner = async (args, io) => {
  if (args.options.get('help') === true) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  const [sub, name, ...extra] = args.positionals;
  const problems = unknownFlagProblems(args, FLAGS, closest);
  if (sub !== 'list' && sub !== 'tools') problems.push(sub === undefined ? 'a subcommand: list or tools' : `unknown subcommand "${sub}" (list or tools)`);
  if (sub === 'tools' && name === undefined) problems.push('mcp tools needs a server name');
  if ((sub === 'list' && name !== undefined) || extra.length > 0) problems.push(`unexpected argument ${[sub === 'list' ? name : undefined, ...extra].filter(Boolean).join(' ')}`);
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) return EXIT.badInput;
  const declared = Object.keys(loaded.config.mcp?.servers ?? {});
  if (sub === 'tools' && name !== undefined && !declared.includes(name)) {
    const hint = closest(name, declared);
    problems.push(`no MCP server "${name}" in mcp.servers${hint ? ` (did you mean "${hint}"?)` : declared.length ? ` (servers: ${declared.join(', ')})` : ''}`);
  }
  if (problems.length > 0) {
    io.stderr([...problems.map((p) => `warden mcp: ${p}`), USAGE].join('\n'));
    return EXIT.badInput;
  }
  const json = args.options.get('json') === true;
  if (declared.length === 0) {
    io.stdout(json ? JSON.stringify({ servers: [] }, null, 2) : 'no MCP servers (mcp.servers names none)');
    return EXIT.ok;
  }
  // Plugin tool names are reserved as the bot reserves them; discovery is enough for their names.
  const plugins = createPluginRuntime(loaded.config, loaded.baseDir);
  const manager = await connectMcpForCommand(loaded.config, loaded.baseDir, { reserved: reservedToolNames(() => plugins.tools) });
  try {
    if (!manager) return EXIT.ok;
    if (sub === 'list') {
      const answer: McpListAnswer = { servers: manager.statuses().map(jsonStatus) };
      io.stdout(json ? JSON.stringify(answer, null, 2) : humanList(answer));
      return EXIT.ok;
    }
    const status = manager.statuses().find((s) => s.name === name)!;
    const tools = (manager.toolsOf(name!) ?? []).map((t) => ({
      id: t.id,
      name: t.tool.name,
      ...(t.tool.title ? { title: t.tool.title } : {}),
      description: t.tool.description,
      annotations: t.tool.annotations,
      approval: t.approval.ask ? 'asks' : 'no',
      why: t.approval.why,
      parameters: t.tool.parameters,
    }));
    if (json) io.stdout(JSON.stringify({ server: jsonStatus(status), tools }, null, 2));
    else {
      const lines = [`${status.name}: ${status.state}${status.lastError ? ` (${status.lastError})` : ''}, ${tools.length} tool${tools.length === 1 ? '' : 's'}`];
      for (const t of tools) lines.push(`  ${t.id} — ${firstSentence(t.description)}`, `      annotations: ${describeAnnotations(t.annotations)}; approval: ${t.approval} (${t.why})`);
      for (const d of status.diagnostics) lines.push(`  ! ${d}`);
      io.stdout(lines.join('\n'));
    }
    return EXIT.ok;
  } finally {
    await manager?.stop();
  }
};

function jsonStatus(s: ServerStatus): McpListAnswer['servers'][number] {
  const { connectedAt, retryAt, ...rest } = s;
  return { ...rest, ...(connectedAt !== undefined ? { connectedAt: new Date(connectedAt).toISOString() } : {}), ...(retryAt !== undefined ? { retryAt: new Date(retryAt).toISOString() } : {}) };
}

function humanList(answer: McpListAnswer): string {
  const lines: string[] = [];
  for (const s of answer.servers) {
    lines.push(`${s.name}${s.safeName !== s.name ? ` (tools named ${s.safeName}__…)` : ''}: ${s.state}, ${s.tools} tool${s.tools === 1 ? '' : 's'} — ${s.transport}${s.serverInfo ? ` — ${s.serverInfo}` : ''}`);
    if (s.lastError) lines.push(`  last error: ${s.lastError}`);
    for (const d of s.diagnostics) lines.push(`  ! ${d}`);
  }
  return lines.join('\n');
}

const firstSentence = (text: string) => text.split(/(?<=\.)\s/)[0]!.slice(0, 160);
