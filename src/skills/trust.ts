import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { WardenConfig } from '../config/index.js';
import { knownAgentIds, resolveAgent } from '../policy/steps.js';
import { sanitizeCommandName } from './commands.js';
import { isWithinOrEqual } from '../util/path-within.js';

/**
 * Which skills the agent could have written. A SKILL.md is trusted text only when the operator
 * put it where no agent can write: every agent's workspace is writable by that agent (its file
 * tools, and the sandbox, which binds the workspace read-write and nothing else of the host
 * that outlives a command). So a skill folder whose real path (symlinks resolved) lies inside
 * any agent's workspace is agent-written, whatever tier its root claims to be — an
 * `extraDirs` entry, a plugin's skills folder or a managed/personal link pointing into a
 * workspace included. Its name, description and instructions are then untrusted data.
 */

/** The real paths of every agent's workspace (and `agents.defaults.workspace`), relative paths against `baseDir`. */
export function agentWritableDirs(config: WardenConfig, baseDir: string): string[] {
  const dirs = new Set<string>([path.resolve(baseDir, config.agents.defaults.workspace)]);
  for (const id of knownAgentIds(config)) {
    const agent = resolveAgent(config, id);
    dirs.add(path.resolve(baseDir, agent?.entry?.workspace ?? config.agents.defaults.workspace));
  }
  return [...dirs].map(realOrNearest);
}

/** Whether `p`, with every symlink resolved, is one of `dirs` or lies inside one. */
export function isInsideAny(p: string, dirs: readonly string[]): boolean {
  const real = realOrNearest(p);
  return dirs.some((d) => isWithinOrEqual(real, d));
}

/**
 * The real path of `p`; for a path that does not exist (yet), the real path of its nearest
 * existing ancestor with the rest appended — a workspace created later is still recognised.
 */
export function realOrNearest(p: string): string {
  const abs = path.resolve(p);
  let head = abs;
  const tail: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync(head), ...tail.reverse());
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return abs;
      tail.push(path.basename(head));
      head = parent;
    }
  }
}

/**
 * Latin look-alikes NFKC leaves alone (confusables.txt, MA): Cyrillic and Greek letters an
 * operator's non-ASCII skill name might be spelled with. Agent-written names must be ASCII
 * (see `agentNameProblem`), so this only folds the trusted side of a comparison.
 */
const LOOKALIKES: Record<string, string> = {
  а: 'a', в: 'b', с: 'c', ԁ: 'd', е: 'e', һ: 'h', і: 'i', ј: 'j', к: 'k', ӏ: 'l', м: 'm', н: 'h', о: 'o', р: 'p', ԛ: 'q', ѕ: 's', т: 't', ц: 'u', ԝ: 'w', х: 'x', у: 'y',
  α: 'a', β: 'b', ε: 'e', η: 'n', ι: 'i', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x', γ: 'y', ζ: 'z',
};

/**
 * The key two skill names are compared by when an agent-written skill meets a trusted one:
 * the slash command both would get (case, `-`, `_`, spaces and dots alike, cut at 32
 * characters), after compatibility forms, accents, invisible characters and the look-alikes
 * above are set aside. Equal keys mean a person or the model could take one for the other.
 */
export function skillNameKey(name: string): string {
  const folded = [...name.normalize('NFKC').toLowerCase().normalize('NFD')]
    .filter((c) => !/[\p{M}\p{Default_Ignorable_Code_Point}\p{Cf}]/u.test(c))
    .map((c) => LOOKALIKES[c] ?? c)
    .join('');
  return sanitizeCommandName(folded);
}

/**
 * Why an agent-written skill's name is refused, or undefined. Only printable ASCII: a name in
 * other scripts could be a look-alike of an operator's skill that no finite table catches
 * (the Agent Skills format itself asks for lowercase letters, digits and hyphens).
 */
export function agentNameProblem(name: string): string | undefined {
  return /^[\x20-\x7e]+$/.test(name) ? undefined : `name ${JSON.stringify(name)} has characters outside printable ASCII, which a skill from a folder an agent can write may not use (a look-alike of another skill's name)`;
}
