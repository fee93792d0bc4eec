import type { IdsByProvider } from '../config/index.js';
import type { AccessGroupsConfig } from '../config/schema/access-groups.js';
import { matchPrincipal } from '../policy/principals.js';

export interface ApproverConfig {
  owners: IdsByProvider;
  approvers?: IdsByProvider | undefined;
  /** What `group:<name>` entries of a request's own approvers (a rule's) name. */
  accessGroups?: AccessGroupsConfig | undefined;
}

/** The memberships a click came with (Discord roles, Slack user groups); absent ones never match. */
export interface ClickMemberships {
  roleIds?: readonly string[] | undefined;
  usergroupIds?: readonly string[] | undefined;
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

/** A request's own approvers (a scope's `approvals.approvers`), on the platform it was asked on. */
type ScopedRequest = { provider: string; approvers?: readonly string[] | undefined };

/**
 * Undefined when `userId` may decide on `provider`; otherwise why not, for the refusal. A
 * request asked in a scope with its own approvers is decided by them alone, and only on the
 * platform where those ids mean something.
 */
export function approverRefusal(config: ApproverConfig, provider: string, userId: string, request?: ScopedRequest, memberships: ClickMemberships = {}): string | undefined {
  if (request?.approvers !== undefined) {
    // Read as a people list (ids, role:, usergroup:, group:): the one reading every list of people gets.
    const who = { provider, userId, roleIds: memberships.roleIds, usergroupIds: memberships.usergroupIds };
    if (request.provider === provider && matchPrincipal(request.approvers, who, config.accessGroups) !== undefined) return undefined;
    if (request.provider !== provider) return `this request is decided by the approvers of its ${request.provider} channel, not on ${provider}`;
    return request.approvers.length === 0
      ? `no approvers are configured for this channel (its approvals.approvers is empty)`
      : `${provider} user ${userId} is not one of this request's approvers`;
  }
  const list = approversFor(config, provider);
  // The platform's list is user ids: an entry with a kind (`role:…`) is never equal to a clicker's id.
  if (list.some((id) => !id.includes(':') && id === userId)) return undefined;
  if (list.length === 0) {
    return `no approvers are configured for ${provider}: set approvals.approvers.${provider} (or owners.${provider})`;
  }
  const source = config.approvers?.[provider as keyof IdsByProvider] !== undefined ? `approvals.approvers.${provider}` : `owners.${provider}`;
  return `${provider} user ${userId} is not an approver (${source})`;
}
