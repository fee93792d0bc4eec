import * as z from 'zod';
import { lazySchema, once } from './lazy.js';
import { toolEntryProblem } from '../tool-glob.js';

/** A tool name or glob in an allow/deny list; an invalid glob is rejected with its key path. */
export const toolEntry = once(() => z
  .string()
  .min(1, 'tool entry must not be empty')
  .superRefine((value, ctx) => {
    const problem = toolEntryProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }));
export const toolList = once(() => z.array(toolEntry()));

export const PROFILE_IDS = ['minimal', 'coding', 'messaging', 'full'] as const;
export const profileId = once(() => z.enum(PROFILE_IDS, {
  error: (issue) => `unknown profile ${JSON.stringify(issue.input)}; expected one of ${PROFILE_IDS.join(', ')}`,
}));
export type ProfileId = z.infer<ReturnType<typeof profileId>>;

/** `{allow, alsoAllow, deny}` as written in a config scope. `allow` and `alsoAllow` together is an error. */
export const toolPolicyConfig = lazySchema(() => z
  .strictObject({
    allow: toolList().optional(),
    alsoAllow: toolList().optional(),
    deny: toolList().optional(),
  })
  .superRefine(rejectAllowWithAlsoAllow));
export type ToolPolicyConfig = z.infer<typeof toolPolicyConfig>;

export function rejectAllowWithAlsoAllow(
  value: { allow?: string[] | undefined; alsoAllow?: string[] | undefined },
  ctx: z.RefinementCtx,
): void {
  if ((value.allow?.length ?? 0) > 0 && (value.alsoAllow?.length ?? 0) > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['alsoAllow'],
      message:
        'allow and alsoAllow cannot both be set in one scope: alsoAllow widens a profile; put every entry in allow, or drop allow and keep alsoAllow',
    });
  }
}

/** `tools.byProvider.<provider/model|provider>`: a provider profile plus a policy. */
export const byProviderEntry = lazySchema(() => z
  .strictObject({
    profile: profileId().optional(),
    allow: toolList().optional(),
    alsoAllow: toolList().optional(),
    deny: toolList().optional(),
  })
  .superRefine(rejectAllowWithAlsoAllow));
export type ByProviderEntry = z.infer<typeof byProviderEntry>;

/** `toolsBySender` keys: `*`, `id:…`, `username:…`, `name:…`, `channel:<channel>:<id>`, or a bare (legacy) id. */
export const toolsBySender = lazySchema(() => z.record(z.string().min(1), toolPolicyConfig));
export type ToolsBySenderConfig = z.infer<typeof toolsBySender>;

/** A chat scope (guild, channel, team, web): its policy, its sender policies, its mention rule. */
export const scopePolicyFields = once(() => ({
  tools: toolPolicyConfig.optional(),
  toolsBySender: toolsBySender.optional(),
  requireMention: z.boolean().optional(),
}));
