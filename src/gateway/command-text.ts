import { closest } from '../config/errors.js';
import { findSkillCommand, type SkillCommandSpec } from '../skills/commands.js';
import { COMMAND_NAMES, OWNER_COMMANDS, parseCommand, type ParsedCommand, type ParsedPluginCommand, type PluginCommandRegistry } from './commands.js';

/**
 * What a message's text is to the router, decided in one place for every surface (typed
 * messages, Discord and Slack native commands, the web chat):
 * - `builtin`: one of Warden's own commands;
 * - `plugin`: a command a plugin registered (`api.registerCommand`); Warden's own names win;
 * - `skill`: a user-invocable skill's command (`/release_notes v1.2`, `/release-notes v1.2`,
 *   `/skill release-notes v1.2`);
 * - `answer`: command-shaped text that names no command (`/frobnicate`), or `/skill` misused:
 *   answered at once, never sent to the model;
 * - `message`: anything else, including text that merely starts with a slash (`/etc/hosts is
 *   empty`), which goes to the model as a message.
 */
export type CommandText =
  | { kind: 'builtin'; command: ParsedCommand }
  | { kind: 'plugin'; command: ParsedPluginCommand }
  | { kind: 'skill'; spec: SkillCommandSpec; args: string }
  | { kind: 'answer'; word: string; text: string }
  | { kind: 'message' };

/** Words a skill's command can never take: the built-ins, the generic `/skill`, Slack's `/warden`. */
export function reservedCommandNames(): string[] {
  return [...COMMAND_NAMES, 'skill', 'warden'];
}

/** `/word` followed by a space or the end: a command's shape. `/etc/hosts` and `/ 5` are not. */
const COMMAND_SHAPE = /^\/(?:warden\s+)?([a-z][a-z0-9_-]*)(?:\s+([\s\S]*))?$/i;

export interface ClassifyOptions {
  skills?: readonly SkillCommandSpec[] | undefined;
  /** Plugin commands: they come before skill commands of the same name. */
  plugins?: PluginCommandRegistry | undefined;
  /** How the help command is spelled where the answer is read (`/warden help` for Slack's native form). */
  help?: string | undefined;
  /**
   * The sender's owner status, where known: false makes the owner commands (`/cron`, `/nodes`)
   * unknown words, answered and hinted as any other. Unset (a platform's own check of the
   * word, before a sender is known) takes them as commands; the router decides again.
   */
  senderIsOwner?: boolean | undefined;
}

export function classifyCommandText(text: string, options: ClassifyOptions = {}): CommandText {
  const trimmed = text.trim();
  const builtin = parseCommand(trimmed);
  const hidden = options.senderIsOwner === false && builtin !== undefined && OWNER_COMMANDS.has(builtin.name);
  if (builtin && !hidden) return { kind: 'builtin', command: builtin };
  const m = COMMAND_SHAPE.exec(trimmed);
  if (!m) return { kind: 'message' };
  const word = m[1]!.toLowerCase();
  const rest = (m[2] ?? '').trim();
  const skills = options.skills ?? [];
  const help = options.help ?? '/help';
  if (word === 'warden' && rest === '') return { kind: 'builtin', command: { name: 'help', args: '' } };
  const plugin = word === 'skill' ? undefined : options.plugins?.get(word);
  if (plugin) return { kind: 'plugin', command: { command: plugin, args: rest, body: trimmed } };
  if (word === 'skill') {
    const [name = ''] = rest.split(/\s+/);
    if (name === '') return { kind: 'answer', word, text: skillUsage(skills) };
    const spec = findSkillCommand(skills, name);
    if (spec) return { kind: 'skill', spec, args: rest.slice(name.length).trim() };
    const hint = closest(name, skills.flatMap((s) => [s.name, s.skillName]));
    return { kind: 'answer', word, text: `No skill "${name}"${hint ? ` (did you mean "${hint}"?)` : ''}. /skills lists the skills.` };
  }
  const spec = findSkillCommand(skills, word);
  if (spec) return { kind: 'skill', spec, args: rest };
  return { kind: 'answer', word, text: unknownCommandText(word, skills, help, options.plugins, options.senderIsOwner !== false) };
}

/** Whether text is a command the bot answers without a mention (built-in, plugin and skill commands). */
export function isAddressedCommand(text: string, skills: readonly SkillCommandSpec[] | undefined, plugins?: PluginCommandRegistry | undefined, senderIsOwner?: boolean): boolean {
  const kind = classifyCommandText(text, { skills, plugins, senderIsOwner }).kind;
  return kind === 'builtin' || kind === 'plugin' || kind === 'skill';
}

/** "Unknown command /statsu (did you mean /status?). /help lists the commands." */
export function unknownCommandText(word: string, skills: readonly SkillCommandSpec[] = [], help = '/help', plugins?: PluginCommandRegistry | undefined, senderIsOwner = true): string {
  const builtins = COMMAND_NAMES.filter((n) => senderIsOwner || !OWNER_COMMANDS.has(n));
  const candidates = [...builtins, ...[...(plugins?.values() ?? [])].map((c) => c.name), ...skills.map((s) => s.name)];
  const hint = closest(word, candidates);
  return `Unknown command /${word}${hint ? ` (did you mean /${hint}?)` : ''}. ${help} lists the commands; nothing was sent to the model.`;
}

function skillUsage(skills: readonly SkillCommandSpec[]): string {
  const names = skills.map((s) => s.name);
  return `usage: /skill <name> [input]; ${names.length > 0 ? `skills: ${names.join(', ')}` : 'this agent has no user-invocable skills'}`;
}
