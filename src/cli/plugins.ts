import { closest } from '../config/errors.js';
import type { PluginDiagnostic } from '../plugins/discover.js';
import { loadPluginRuntime, type PluginRecord } from '../plugins/runtime.js';
import { EXIT, type CommandRunner } from './args.js';
import { COMMAND_USAGE } from './usage.js';
import { loadConfigForCommand } from './config.js';
import { unknownFlagProblems } from './context.js';

/**
 * `warden plugins [--config FILE] [--json]`: every plugin the config names, loaded as the bot
 * loads them — status (loaded, disabled, blocked, error) and why, the tools it declares and
 * implements, its hooks, commands, skill folders and trusted policies, and its diagnostics.
 * Exit 0 whatever the plugins' state (a broken plugin does not stop Warden either).
 */

const FLAGS = ['config', 'json', 'help'];
const USAGE = COMMAND_USAGE.plugins!;

export interface PluginsAnswer {
  plugins: Array<{
    id: string;
    name: string;
    version?: string | undefined;
    status: PluginRecord['status'];
    why?: string | undefined;
    origin: PluginRecord['origin'];
    dir: string;
    package?: string | undefined;
    declaredTools: string[];
    tools: string[];
    hooks: PluginRecord['hooks'];
    commands: string[];
    skillsDirs: string[];
    trustedPolicies: string[];
    diagnostics: Array<Omit<PluginDiagnostic, 'pluginId' | 'phase'>>;
  }>;
  diagnostics: Array<Omit<PluginDiagnostic, 'phase'>>;
}

export const run: CommandRunner = async (args, io) => {
  if (args.options.get('help') === true) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  const problems = unknownFlagProblems(args, FLAGS, closest);
  if (args.positionals.length > 0) problems.push(`unexpected argument ${args.positionals.join(' ')}`);
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) return EXIT.badInput;
  if (problems.length > 0) {
    io.stderr(problems.map((p) => `warden plugins: ${p}`).join('\n'));
    return EXIT.badInput;
  }
  const runtime = await loadPluginRuntime(loaded.config, loaded.baseDir);
  const answer: PluginsAnswer = {
    plugins: runtime.plugins.map((p) => ({
      id: p.id,
      name: p.name,
      ...(p.version !== undefined ? { version: p.version } : {}),
      status: p.status,
      ...(p.why !== undefined ? { why: p.why } : {}),
      origin: p.origin,
      dir: p.dir,
      ...(p.packageName !== undefined ? { package: p.requested ?? p.packageName } : {}),
      declaredTools: p.declaredTools,
      tools: p.tools,
      hooks: p.hooks,
      commands: p.commands,
      skillsDirs: p.skillsDirs,
      trustedPolicies: p.trustedPolicies,
      diagnostics: p.diagnostics.map((d) => ({ level: d.level, message: d.message })),
    })),
    diagnostics: runtime.diagnostics.map((d) => ({ level: d.level, message: d.message, ...(d.pluginId ? { pluginId: d.pluginId } : {}) })),
  };
  io.stdout(args.options.get('json') === true ? JSON.stringify(answer, null, 2) : human(answer));
  return EXIT.ok;
};

function human(answer: PluginsAnswer): string {
  if (answer.plugins.length === 0 && answer.diagnostics.length === 0) return 'no plugins (plugins.paths and plugins.load name none)';
  const lines: string[] = [];
  for (const p of answer.plugins) {
    lines.push(`${p.id}${p.version ? `@${p.version}` : ''}  ${p.status}${p.why ? ` (${p.why})` : ''}  ${p.package ?? p.dir}`);
    if (p.tools.length > 0 || p.declaredTools.length > 0) lines.push(`  tools: ${(p.tools.length > 0 ? p.tools : p.declaredTools).join(', ')}${p.tools.length === 0 ? ' (declared, not implemented)' : ''}`);
    if (p.hooks.length > 0) lines.push(`  hooks: ${p.hooks.map((h) => `${h.name}${h.toolMatcher ? `[${h.toolMatcher.join(',')}]` : ''}${h.priority ? ` p${h.priority}` : ''}`).join(', ')}`);
    if (p.commands.length > 0) lines.push(`  commands: ${p.commands.map((c) => `/${c}`).join(', ')}`);
    if (p.skillsDirs.length > 0) lines.push(`  skills: ${p.skillsDirs.join(', ')}`);
    if (p.trustedPolicies.length > 0) lines.push(`  trusted policies: ${p.trustedPolicies.join(', ')}`);
    for (const d of p.diagnostics) lines.push(`  ${d.level}: ${d.message}`);
  }
  for (const d of answer.diagnostics) lines.push(`${d.level}: ${d.message}`);
  return lines.join('\n');
}
