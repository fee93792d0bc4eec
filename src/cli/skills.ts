import { listSkills, type SkillListing } from '../skills/index.js';
import { EXIT, stringOption, type CliIO, type CommandRunner } from './args.js';
import { loadConfigForCommand, printResult } from './config.js';

/** The stable JSON answer of `warden skills --json`. */
export interface SkillsAnswer {
  eligible: Array<{ name: string; root: string; location: string }>;
  ineligible: Array<{ name: string; location: string; why: string }>;
  errors: Array<{ file: string; error: string }>;
}

export function skillsAnswer(listing: SkillListing): SkillsAnswer {
  return {
    eligible: listing.eligible.map((s) => ({ name: s.name, root: s.root, location: s.location })),
    ineligible: listing.ineligible.map((s) => ({ name: s.name, location: s.location, why: s.why })),
    errors: listing.errors.map((e) => ({ file: e.file, error: e.error })),
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
  const result = listSkills(loaded.config, stringOption(args, 'agent')?.trim() || undefined, {
    baseDir: loaded.baseDir,
    env: io.env,
    homeDir: io.env.HOME?.trim() || undefined,
  });
  if (!result.ok) {
    io.stderr(`warden skills: ${result.error}`);
    return EXIT.badInput;
  }
  printResult(args, io, skillsAnswer(result.value), () => humanText(result.value));
  return EXIT.ok;
};

function humanText(listing: SkillListing): string {
  const lines = [`Skills of agent ${listing.agentId} (workspace ${listing.workspace})`, ''];
  lines.push(`Eligible (${listing.eligible.length}):`);
  for (const s of listing.eligible) {
    const flags = [s.modelInvocable ? '' : 'not offered to the model', s.userInvocable ? '' : 'no slash command'].filter(Boolean);
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
  lines.push('', 'Roots, lowest precedence first:', ...listing.roots.map((r) => `  ${r.source.padEnd(9)} ${r.dir}`));
  return lines.join('\n');
}
