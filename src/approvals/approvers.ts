import type { IdsByProvider } from '../config/index.js';

export interface ApproverConfig {
  owners: IdsByProvider;
  approvers?: IdsByProvider | undefined;
}

/**
 * Who may decide approvals on a provider: `approvals.approvers.<provider>` when that key is
 * set (even to an empty list), else `owners.<provider>`. Nobody otherwise.
 */
export function approversFor(config: ApproverConfig, provider: string): readonly string[] {
  const explicit = config.approvers?.[provider as keyof IdsByProvider];
  if (explicit !== undefined) return explicit;
  return config.owners[provider as keyof IdsByProvider] ?? [];
}

/** Undefined when `userId` may decide on `provider`; otherwise why not, for the refusal. */
export function approverRefusal(config: ApproverConfig, provider: string, userId: string): string | undefined {
  const list = approversFor(config, provider);
  if (list.includes(userId)) return undefined;
  if (list.length === 0) {
    return `no approvers are configured for ${provider}: set approvals.approvers.${provider} (or owners.${provider})`;
  }
  const source = config.approvers?.[provider as keyof IdsByProvider] !== undefined ? `approvals.approvers.${provider}` : `owners.${provider}`;
  return `${provider} user ${userId} is not an approver (${source})`;
}
