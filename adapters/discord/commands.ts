import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  Routes,
  type APIApplicationCommand,
  type REST,
  type RESTPutAPIApplicationCommandsJSONBody,
} from 'discord.js';
import { NATIVE_COMMANDS } from '../common/native-commands.js';

/** Discord's limit on a command or option description. */
const DESCRIPTION_LIMIT = 100;

/** Warden's commands as Discord application commands (chat input, string options). */
export function discordCommandDefinitions(): RESTPutAPIApplicationCommandsJSONBody {
  return NATIVE_COMMANDS.map((c) => ({
    type: ApplicationCommandType.ChatInput,
    name: c.name,
    description: c.description.slice(0, DESCRIPTION_LIMIT),
    options: c.options.map((o) => ({
      type: ApplicationCommandOptionType.String as const,
      name: o.name,
      description: o.description.slice(0, DESCRIPTION_LIMIT),
      required: o.required,
      ...(o.choices ? { choices: o.choices.map((v) => ({ name: v, value: v })) } : {}),
    })),
  }));
}

type CommandShape = { type?: number | undefined; name: string; description: string; options?: ReadonlyArray<Record<string, unknown>> | undefined };

/** What registration is about: Discord adds ids, versions and defaults that do not count. */
function shape(commands: readonly CommandShape[]): string {
  const normal = commands
    .map((c) => ({
      type: c.type ?? ApplicationCommandType.ChatInput,
      name: c.name,
      description: c.description,
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
 * when it differs, so restarts cost one GET and never count against Discord's daily limit
 * on command creation.
 */
export async function registerCommands(rest: REST, applicationId: string): Promise<'unchanged' | 'registered'> {
  const wanted = discordCommandDefinitions();
  const registered = (await rest.get(Routes.applicationCommands(applicationId))) as APIApplicationCommand[];
  if (sameCommands(registered as CommandShape[], wanted as CommandShape[])) return 'unchanged';
  await rest.put(Routes.applicationCommands(applicationId), { body: wanted });
  return 'registered';
}
