import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  InteractionContextType,
  Routes,
  type APIApplicationCommand,
  type REST,
  type RESTPutAPIApplicationCommandsJSONBody,
} from 'discord.js';
import { OWNER_COMMANDS } from '../../src/gateway/commands.js';
import { log } from '../../src/log/log.js';
import type { SkillCommandSpec } from '../../src/skills/commands.js';
import { NATIVE_COMMANDS, SKILL_INPUT_OPTION } from '../common/native-commands.js';

/** Discord's limit on a command or option description. */
const DESCRIPTION_LIMIT = 100;
/** Discord's limit on an application's global chat-input commands. */
export const DISCORD_COMMAND_LIMIT = 100;

const describe = (text: string) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= DESCRIPTION_LIMIT ? flat : `${flat.slice(0, DESCRIPTION_LIMIT - 1).trimEnd()}…`;
};

/**
 * Where a command may be used: guild channels and the DM with the bot. Stated rather than left
 * to Discord's default (which adds group DMs of user installs, where Warden is not), so the
 * registered set compares exactly on the next start.
 */
const EVERYWHERE = [InteractionContextType.Guild, InteractionContextType.BotDM];
/**
 * The owner-only control commands (`/cron`, `/nodes`, `/pair`, `/secrets`) are offered only in
 * the DM with the bot, where the owner uses them: Discord shows a command registered with
 * `default_member_permissions: "0"` to every guild administrator, owner or not, so a permission
 * alone would still put them in an admin's picker. Typed in a guild they still reach the router.
 */
const DM_ONLY = [InteractionContextType.BotDM];

/**
 * Where Discord offers a command: the bot DM only for owner-only commands, guilds and the bot
 * DM for every other one. This only hides: the router's owner check on every invocation, typed
 * or native, stays the gate (a non-owner reaching `/cron` in their own DM is refused there).
 */
export function contextsFor(name: string): InteractionContextType[] {
  return [...(OWNER_COMMANDS.has(name) ? DM_ONLY : EVERYWHERE)];
}

/**
 * Discord's permission bitset a member needs to see and run a command in a guild. `"0"` (only
 * administrators) for the owner-only commands as well: they are not offered in guilds at all
 * (see `contextsFor`), and this keeps them from members should a client ignore `contexts`.
 * Permissions do not apply in the DM with the bot. `null`: everyone.
 */
export function memberPermissionsFor(name: string): '0' | null {
  return OWNER_COMMANDS.has(name) ? '0' : null;
}

/**
 * Warden's commands as Discord application commands (chat input, string options): the built-in
 * ones, then one per skill command with an optional free-text `input` option carrying the
 * skill's arguments. Skill names are already lower-case `a-z0-9_`, at most 32 characters, and
 * never a built-in's. Beyond Discord's 100 commands the rest stay typed-only (logged).
 */
export function discordCommandDefinitions(skills: readonly SkillCommandSpec[] = []): RESTPutAPIApplicationCommandsJSONBody {
  const builtins = NATIVE_COMMANDS.map((c) => ({
    type: ApplicationCommandType.ChatInput,
    name: c.name,
    description: c.description.slice(0, DESCRIPTION_LIMIT),
    default_member_permissions: memberPermissionsFor(c.name),
    contexts: contextsFor(c.name),
    options: c.options.map((o) => ({
      type: ApplicationCommandOptionType.String as const,
      name: o.name,
      description: o.description.slice(0, DESCRIPTION_LIMIT),
      required: o.required,
      ...(o.choices ? { choices: o.choices.map((v) => ({ name: v, value: v })) } : {}),
    })),
  }));
  const room = DISCORD_COMMAND_LIMIT - builtins.length;
  if (skills.length > room) log.warn({ registered: room, typedOnly: skills.slice(room).map((s) => s.name) }, 'more skill commands than Discord takes; the rest work typed only');
  const fromSkills = skills.slice(0, Math.max(0, room)).map((s) => ({
    type: ApplicationCommandType.ChatInput,
    name: s.name,
    description: describe(s.description) || s.name,
    default_member_permissions: null,
    contexts: [...EVERYWHERE],
    options: [
      {
        type: ApplicationCommandOptionType.String as const,
        name: SKILL_INPUT_OPTION,
        description: s.dispatch ? `Arguments for ${s.dispatch.tool}` : `What you want from the ${s.skillName} skill`.slice(0, DESCRIPTION_LIMIT),
        required: false,
      },
    ],
  }));
  return [...builtins, ...fromSkills];
}

type CommandShape = {
  type?: number | undefined;
  name: string;
  description: string;
  default_member_permissions?: string | null | undefined;
  contexts?: readonly number[] | null | undefined;
  options?: ReadonlyArray<Record<string, unknown>> | undefined;
};

/** What registration is about: Discord adds ids, versions and defaults that do not count. */
function shape(commands: readonly CommandShape[]): string {
  const normal = commands
    .map((c) => ({
      type: c.type ?? ApplicationCommandType.ChatInput,
      name: c.name,
      description: c.description,
      // Who sees it and where count: a set registered before owner commands were hidden, or
      // with them offered in guilds, is replaced.
      permissions: c.default_member_permissions ?? null,
      contexts: c.contexts ? [...c.contexts].sort((a, b) => a - b) : null,
      options: (c.options ?? []).map((o) => ({
        type: o.type,
        name: o.name,
        description: o.description,
        required: o.required === true,
        choices: ((o.choices as Array<{ name: string; value: unknown }> | undefined) ?? []).map((ch) => [ch.name, ch.value]),
      })),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return JSON.stringify(normal);
}

/** Whether the registered commands already are the wanted ones (then nothing is sent). */
export function sameCommands(registered: readonly CommandShape[], wanted: readonly CommandShape[]): boolean {
  return shape(registered) === shape(wanted);
}

/**
 * Registers the commands globally for the application, so they work in every guild and in
 * DMs. Idempotent: the registered set is read first and replaced (one bulk overwrite) only
 * when it differs, so restarts — and skill changes that leave the set as it was — cost one GET
 * and never count against Discord's daily limit on command creation.
 */
export async function registerCommands(rest: REST, applicationId: string, skills: readonly SkillCommandSpec[] = []): Promise<'unchanged' | 'registered'> {
  const wanted = discordCommandDefinitions(skills);
  const registered = (await rest.get(Routes.applicationCommands(applicationId))) as APIApplicationCommand[];
  if (sameCommands(registered as CommandShape[], wanted as CommandShape[])) return 'unchanged';
  await rest.put(Routes.applicationCommands(applicationId), { body: wanted });
  return 'registered';
}
