import { reservedCommandNames } from '../gateway/command-text.js';
import { ignoredDispatches, listingFromSnapshot, refusedCommands, refusedCommandWarning, shadowedWarning, skillCommandSpecs, takeSkillSnapshot, type LoadedSkill, type SkillCommandSpec, type SkillListing } from '../skills/index.js';
import { loadPluginRuntime } from '../plugins/runtime.js';
import { EXIT, stringOption, type CliIO, type CommandRunner } from './args.js';
import { loadConfigForCommand, printResult } from './config.js';

/** The stable JSON answer of `warden skills --json`. */
export interface SkillsAnswer {
  /** `agentWritable`: in a folder an agent can write, so shown to the model as untrusted data. */
  eligible: Array<{ name: string; root: string; location: string; agentWritable: boolean }>;
  ineligible: Array<{ name: string; location: string; why: string }>;
  errors: Array<{ file: string; error: string }>;
  /** The slash commands of the user-invocable skills, as the chat would take them. */
  commands: Array<{ command: string; skill: string; tool?: string }>;
  /** Skills whose command name a built-in command took, and agent-written ones that got no command for it. */
  warnings: string[];
}

export function skillsAnswer(listing: SkillListing, commands: readonly SkillCommandSpec[] = [], eligible: readonly LoadedSkill[] = []): SkillsAnswer {
  return {
    eligible: listing.eligible.map((s) => ({ name: s.name, root: s.root, location: s.location, agentWritable: s.agentWritable })),
    ineligible: listing.ineligible.map((s) => ({ name: s.name, location: s.location, why: s.why })),
    errors: listing.errors.map((e) => ({ file: e.file, error: e.error })),
    commands: commands.map((c) => ({ command: `/${c.name}`, skill: c.skillName, ...(c.dispatch ? { tool: c.dispatch.tool } : {}) })),
    warnings: [...commands.flatMap((c) => shadowedWarning(c) ?? []), ...refusedCommands(eligible, reservedCommandNames()).map(refusedCommandWarning), ...ignoredDispatches(eligible)],
  };
}

/**
 * `warden skills [--agent ID] [--config FILE] [--json]`: the skills of an agent's roots —
 * eligible ones with the root that won, ineligible and overridden ones with why, and files that
 * could not be loaded. Exit 2 for a bad config or an unknown agent.
 */
export const run: CommandRunner = async (args, io: CliIO) => {
  if (args.options.get('agent') === true) {
    io.stderr('warden skills: --agent needs an agent id');
    return EXIT.badInput;
  }
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) return EXIT.badInput;
  const pluginSkillDirs = (await loadPluginRuntime(loaded.config, loaded.baseDir)).skillsDirs();
  const result = takeSkillSnapshot(loaded.config, stringOption(args, 'agent')?.trim() || undefined, {
    baseDir: loaded.baseDir,
    pluginSkillDirs,
    env: io.env,
    homeDir: io.env.HOME?.trim() || undefined,
  });
  if (!result.ok) {
    io.stderr(`warden skills: ${result.error}`);
    return EXIT.badInput;
  }
  const listing = listingFromSnapshot(result.value);
  // The same names the running bot gives them: built-ins win, suffixes settle the rest.
  const commands = skillCommandSpecs(result.value.eligible, reservedCommandNames());
  const answer = skillsAnswer(listing, commands, result.value.eligible);
  printResult(args, io, answer, () => humanText(listing, answer));
  return EXIT.ok;
};

function humanText(listing: SkillListing, answer: SkillsAnswer): string {
  const lines = [`Skills of agent ${listing.agentId} (workspace ${listing.workspace})`, ''];
  lines.push(`Eligible (${listing.eligible.length}):`);
  for (const s of listing.eligible) {
    const flags = [s.agentWritable ? 'agent-writable: untrusted' : '', s.modelInvocable ? '' : 'not offered to the model', s.userInvocable ? '' : 'no slash command'].filter(Boolean);
    lines.push(`  ${s.name.padEnd(24)} ${s.root.padEnd(9)} ${s.location}${flags.length > 0 ? `  (${flags.join(', ')})` : ''}`);
  }
  if (listing.ineligible.length > 0) {
    lines.push('', `Not eligible (${listing.ineligible.length}):`);
    for (const s of listing.ineligible) lines.push(`  ${s.name.padEnd(24)} ${s.why}`, `  ${''.padEnd(24)} ${s.location}`);
  }
  if (listing.errors.length > 0) {
    lines.push('', `Not loaded (${listing.errors.length}):`);
    for (const e of listing.errors) lines.push(`  ${e.file}`, `    ${e.error}`);
  }
  if (answer.commands.length > 0) {
    lines.push('', `Slash commands (${answer.commands.length}):`);
    for (const c of answer.commands) lines.push(`  ${c.command.padEnd(24)} ${c.skill}${c.tool ? `  (runs ${c.tool}, no model)` : ''}`);
  }
  for (const w of answer.warnings) lines.push(`⚠ ${w}`);
  lines.push('', 'Roots, lowest precedence first:', ...listing.roots.map((r) => `  ${r.source.padEnd(9)} ${r.dir}`));
  return lines.join('\n');
}
