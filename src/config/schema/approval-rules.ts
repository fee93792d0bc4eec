import * as z from 'zod';
import { lazySchema, once } from './lazy.js';
import { linearRegexProblem, type LinearFlags } from '../../util/linear-regex.js';
import { toolEntryProblem } from '../tool-glob.js';
import { principalEntry } from './access-groups.js';

/**
 * `approvals.rules[]`: which tool calls a person confirms before they run, beyond exec's own
 * verdict. The first rule that matches a call decides; a rule only ever adds asking.
 *
 * - `tool` / `tools`: tool-policy entries (names, globs, `group:…`, plugin ids, `<server>__*`).
 * - `match`: argument path (`channel`, `target.id`, `paths.0`) → a `*`-glob (`deploy/*`), a
 *   regex written `/…/flags` (run by the linear-time engine), or a literal number/boolean/null.
 *   Every entry must match; an absent argument matches nothing.
 * - `where`: the conversation (provider, guild, channel by id or `#name`, agent, and
 *   `senderGroup`, a people list the requester must be on).
 * - `ask`: `on-miss` (a grant of this rule covers a repeat) or `always` (no grant counts).
 * - `approvers`: a people list (ids, `role:`, `usergroup:`, `group:`); absent = the usual approvers.
 * - `quorum`: distinct approvers needed (the requester never counts).
 * - `escalateAfterSec` / `escalateTo`: undecided by then → the card goes to these too.
 * - `expiresSec`: how long the card waits; on expiry the call is denied.
 * - `risk`: the card's risk line (else the tool's own).
 */
export const matchValue = once(() => z.union([z.string(), z.number(), z.boolean(), z.null()]));

const where = lazySchema(() => z.strictObject({
  provider: z.enum(['discord', 'slack', 'web', 'cli']).optional(),
  guild: z.string().min(1).optional(),
  channel: z.string().min(1).optional(),
  agent: z.string().min(1).optional(),
  senderGroup: z.array(principalEntry()).min(1).optional(),
}));

export const approvalRuleConfig = lazySchema(() => z
  .strictObject({
    tool: z.string().min(1).optional(),
    tools: z.array(z.string().min(1)).min(1).optional(),
    match: z.record(z.string().min(1), matchValue()).optional(),
    where: where.optional(),
    ask: z.enum(['always', 'on-miss']).default('on-miss'),
    approvers: z.array(principalEntry()).min(1).optional(),
    quorum: z.number().int().min(1).max(10).default(1),
    escalateAfterSec: z.number().int().positive().optional(),
    escalateTo: z.array(z.string().min(1)).min(1).optional(),
    expiresSec: z.number().int().positive().max(7 * 86_400).optional(),
    risk: z.string().trim().min(1).max(200).optional(),
  })
  .superRefine((rule, ctx) => {
    if ((rule.tool === undefined) === (rule.tools === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['tool'], message: 'a rule names its tools with exactly one of tool or tools' });
    }
    const entries = rule.tool !== undefined ? [['tool', rule.tool] as const] : (rule.tools ?? []).map((t, i) => [i, t] as const);
    for (const [key, entry] of entries) {
      const problem = toolEntryProblem(entry);
      if (problem) ctx.addIssue({ code: 'custom', path: key === 'tool' ? ['tool'] : ['tools', key], message: problem });
    }
    for (const [path, value] of Object.entries(rule.match ?? {})) {
      if (typeof value !== 'string') continue;
      const regex = regexLiteral(value);
      if (regex === undefined) continue;
      if (!regex.ok) {
        ctx.addIssue({ code: 'custom', path: ['match', path], message: regex.error });
        continue;
      }
      const problem = linearRegexProblem(regex.source, regex.flags);
      if (problem) ctx.addIssue({ code: 'custom', path: ['match', path], message: `regex not usable: ${problem}` });
    }
    if (rule.escalateAfterSec !== undefined && rule.escalateTo === undefined) {
      ctx.addIssue({ code: 'custom', path: ['escalateTo'], message: 'escalateAfterSec needs escalateTo (who the card goes to)' });
    }
    if (rule.escalateTo !== undefined && rule.escalateAfterSec === undefined) {
      ctx.addIssue({ code: 'custom', path: ['escalateAfterSec'], message: 'escalateTo needs escalateAfterSec (when the card goes there)' });
    }
  }));
export type ApprovalRuleConfig = z.infer<typeof approvalRuleConfig>;

const FLAGS: readonly LinearFlags[] = ['', 'i', 'u', 's', 'is', 'us'];

/**
 * A match value written `/source/flags` (flags from `i`, `s`, `u`) is a regex; anything else is
 * a glob (`/srv/*` stays a glob: `*` is no flag). Undefined when the value is not in regex
 * form; `ok: false` when it is, with a flag combination the engine does not take.
 */
export function regexLiteral(value: string): { ok: true; source: string; flags: LinearFlags } | { ok: false; error: string } | undefined {
  if (value.length < 2 || !value.startsWith('/')) return undefined;
  const end = value.lastIndexOf('/');
  if (end <= 0) return undefined;
  const flags = value.slice(end + 1);
  for (const f of flags) if (f !== 'i' && f !== 's' && f !== 'u') return undefined;
  const canonical = `${flags.includes('i') ? 'i' : ''}${flags.includes('u') ? 'u' : ''}${flags.includes('s') ? 's' : ''}`;
  if (!(FLAGS as readonly string[]).includes(canonical) || canonical.length !== flags.length) {
    return { ok: false, error: `regex flags ${JSON.stringify(flags)} are not supported (one of i, s, u, is, us)` };
  }
  return { ok: true, source: value.slice(1, end), flags: canonical as LinearFlags };
}
