import { APPROVAL_DECISIONS } from '../../src/approvals/types.js';
import { classifyCommandText, unknownCommandText } from '../../src/gateway/command-text.js';
import { COMMAND_NAMES, type CommandName } from '../../src/gateway/commands.js';
import type { SkillCommandSpec } from '../../src/skills/commands.js';

/** One argument of a native command; its value is appended to the typed form in spec order. */
export interface NativeCommandOption {
  name: string;
  description: string;
  required: boolean;
  choices?: readonly string[] | undefined;
}

/** A chat command as platforms with real slash commands declare it. */
export interface NativeCommandSpec {
  name: CommandName;
  description: string;
  options: readonly NativeCommandOption[];
}

/**
 * Warden's commands for Discord's command picker (and the Slack usage hint): every chat command
 * but the web chat's own (`/new`). Every native invocation becomes the typed command text, so
 * the router runs it exactly as if typed.
 */
export const NATIVE_COMMANDS: readonly NativeCommandSpec[] = [
  { name: 'tools', description: 'The tools you have here, and why others are missing', options: [] },
  { name: 'exec', description: 'Run a shell command (may need an approval)', options: [{ name: 'command', description: 'The shell command', required: true }] },
  {
    name: 'approve',
    description: 'Decide a pending approval',
    options: [
      { name: 'id', description: 'The approval id shown on the card', required: true },
      { name: 'decision', description: 'What to decide', required: true, choices: APPROVAL_DECISIONS },
    ],
  },
  { name: 'approvals', description: 'What waits for a decision in this conversation', options: [] },
  { name: 'skills', description: 'The skills this agent knows', options: [] },
  { name: 'status', description: 'Agent, model, session and queue', options: [] },
  { name: 'stop', description: 'Stop the running turn', options: [] },
  {
    name: 'cron',
    description: 'Scheduled jobs (owners only)',
    options: [{ name: 'args', description: 'list | add "<schedule>" <message> | run|pause|resume|remove <id>', required: false }],
  },
  { name: 'usage', description: 'What model calls cost: yours, this channel’s, everyone’s (owners)', options: [{ name: 'args', description: 'me | channel | all', required: false, choices: ['me', 'channel', 'all'] }] },
  { name: 'help', description: 'The list of commands', options: [] },
  { name: 'nodes', description: 'Paired nodes (owners): list, approve CODE, deny CODE, unpair NAME', options: [{ name: 'args', description: 'list | approve CODE | deny CODE | unpair NAME', required: false }] },
  { name: 'pair', description: 'DM pairing requests (owners): list, or approve CODE', options: [{ name: 'code', description: 'The code the new user was given', required: false }] },
  { name: 'secrets', description: 'Names of stored secrets (owners; never values)', options: [] },
];

/**
 * Answers that concern only the person asking are private (Discord ephemeral, Slack
 * ephemeral): their tools, the status, the help and skills lists, and an owner's scheduled
 * jobs (their messages and targets are the owner's business). Commands that act in the
 * conversation (`/exec`, `/stop`, `/approve`) answer in the open, as their typed forms do,
 * so everyone there sees what ran and who decided.
 */
const PRIVATE_ANSWERS: ReadonlySet<CommandName> = new Set(['tools', 'status', 'help', 'skills', 'cron', 'usage', 'secrets']);

export function answersPrivately(name: string): boolean {
  return PRIVATE_ANSWERS.has(name as CommandName);
}

export const isCommandName = (name: string): name is CommandName => (COMMAND_NAMES as readonly string[]).includes(name);

/** `exec` + `{command: 'ls -la'}` → `/exec ls -la`: the typed form of a native invocation. */
export function typedCommandText(name: CommandName, values: Readonly<Record<string, string | undefined>>): string {
  const spec = NATIVE_COMMANDS.find((c) => c.name === name);
  const args = (spec?.options ?? []).map((o) => values[o.name]?.trim() ?? '').filter((v) => v !== '');
  return [`/${name}`, ...args].join(' ');
}

/** The input option a native skill command carries: the skill's arguments, as free text. */
export const SKILL_INPUT_OPTION = 'input';

/** The typed form of a native skill command: `/release_notes v1.2`. */
export function typedSkillText(name: string, input: string | undefined): string {
  const args = input?.trim() ?? '';
  return args === '' ? `/${name}` : `/${name} ${args}`;
}

/**
 * A Slack slash command (`/warden tools`, `/warden release-notes v1.2`, or `/warden-tools`,
 * `/warden-release-notes v1.2` where a workspace declares one command per word) as the typed
 * command text, or the answer to give instead. A bare `/warden` is `/warden help`. What is a
 * command is the router's decision (`classifyCommandText`), with the same did-you-mean answer
 * for a word that is none.
 */
export function slackCommandText(
  command: string,
  text: string,
  skills: readonly SkillCommandSpec[] = [],
): { ok: true; name: string; text: string } | { ok: false; message: string } {
  const suffix = /^\/warden(?:-([a-z0-9_-]+))?$/i.exec(command.trim())?.[1];
  const words = text.trim();
  const first = suffix ?? words.split(/\s+/)[0] ?? '';
  const name = (first === '' ? 'help' : first).toLowerCase();
  const args = (suffix ? words : words.slice(first.length)).trim();
  const typed = args === '' ? `/${name}` : `/${name} ${args}`;
  const classified = classifyCommandText(typed, { skills, help: '`/warden help`' });
  switch (classified.kind) {
    case 'builtin':
      return { ok: true, name: classified.command.name, text: typed };
    case 'skill':
      return { ok: true, name: classified.spec.name, text: typed };
    case 'plugin':
      return { ok: true, name: classified.command.command.name, text: typed };
    case 'answer':
      return { ok: false, message: classified.text };
    case 'message':
      return { ok: false, message: unknownCommandText(name, skills, '`/warden help`') };
  }
}
