import type { MembershipResolver } from '../../src/gateway/types.js';

/**
 * Slack user groups (`S…`) of a user, for `usergroup:<id>` entries: Slack sends no memberships
 * with a message, so the adapter reads them with `usergroups.list` and `usergroups.users.list`
 * (scope `usergroups:read`), keeps the whole workspace's map for `ttlMs`, and drops it when
 * Slack says a group changed (`subteam_members_changed`, `subteam_updated`, `subteam_created`).
 * A lookup that fails answers undefined — no memberships known, so no `usergroup:` entry matches
 * (fail closed) — and is tried again at the next message.
 */
export interface UsergroupApi {
  list(): Promise<{ ok?: boolean; usergroups?: Array<{ id?: string; date_delete?: number }> }>;
  users(usergroup: string): Promise<{ ok?: boolean; users?: string[] }>;
}

export const USERGROUP_TTL_MS = 5 * 60 * 1000;

export class SlackUsergroupCache implements MembershipResolver {
  private byUser: Map<string, string[]> | undefined;
  private loadedAt = 0;
  private loading: Promise<Map<string, string[]> | undefined> | undefined;
  private generation = 0;

  constructor(
    private readonly api: UsergroupApi,
    private readonly options: { ttlMs?: number; now?: () => number; onError?: (err: unknown) => void } = {},
  ) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  async usergroupsOf(userId: string): Promise<readonly string[] | undefined> {
    const map = await this.load();
    return map ? (map.get(userId) ?? []) : undefined;
  }

  /** Slack said a group changed: the next lookup reads them again. */
  invalidate(): void {
    this.generation++;
    this.byUser = undefined;
    this.loading = undefined;
  }

  private async load(): Promise<Map<string, string[]> | undefined> {
    if (this.byUser && this.now() - this.loadedAt < (this.options.ttlMs ?? USERGROUP_TTL_MS)) return this.byUser;
    if (!this.loading) {
      const generation = this.generation;
      this.loading = this.fetch().then(
        (map) => {
          // A change announced while reading makes this read stale: keep nothing.
          if (generation === this.generation) {
            this.byUser = map;
            this.loadedAt = this.now();
            this.loading = undefined;
          }
          return map;
        },
        (err: unknown) => {
          if (generation === this.generation) this.loading = undefined;
          this.options.onError?.(err);
          return undefined;
        },
      );
    }
    return this.loading;
  }

  private async fetch(): Promise<Map<string, string[]>> {
    const listed = await this.api.list();
    if (listed.ok === false) throw new Error('usergroups.list failed');
    const map = new Map<string, string[]>();
    for (const group of listed.usergroups ?? []) {
      if (!group.id || (group.date_delete ?? 0) > 0) continue;
      const members = await this.api.users(group.id);
      if (members.ok === false) throw new Error(`usergroups.users.list failed for ${group.id}`);
      for (const user of members.users ?? []) {
        const list = map.get(user) ?? [];
        list.push(group.id);
        map.set(user, list);
      }
    }
    return map;
  }
}
