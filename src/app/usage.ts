// Usage accounting and budgets as startup builds them: the store-backed service the turn loop
// asks before each model call, with `ask` budgets opening their cards through the approvals.
import { MAX_HOOK_APPROVAL_TIMEOUT_MS, type ApprovalService } from '../approvals/service.js';
import type { WardenConfig } from '../config/index.js';
import type { Store } from '../store/index.js';
import { UsageService, UsageStore, type RaiseApprovals } from '../usage/index.js';

/**
 * A budget raise is an approval card like any other: shown where the conversation's cards go,
 * decided by the approvers of that scope (a guild's or channel's own, else the platform's), and
 * first-writer-wins. It offers allow-once ("raise for this period") and deny; nothing runs when
 * it is decided — the next call of that counter finds the approval and applies the raise once.
 */
export const RAISE_TOOL = 'usage.raise';

export function raiseApprovals(approvals: Pick<ApprovalService, 'open' | 'get'>): RaiseApprovals {
  return {
    async open({ attribution: a, title, text, facts }) {
      const request = await approvals.open(
        // The longest a `tool` card may wait (MAX_HOOK_APPROVAL_TIMEOUT_MS): an approver has to see it first.
        { kind: 'tool', tool: RAISE_TOOL, title, preview: text, fullText: text, facts, allowedDecisions: ['allow-once', 'deny'], timeoutMs: MAX_HOOK_APPROVAL_TIMEOUT_MS },
        {
          agentId: a.agentId,
          sessionKey: a.sessionKey ?? `usage:${a.agentId}`,
          provider: a.platform ?? 'cli',
          channelId: a.channelId,
          threadId: a.threadId,
          guildId: a.guildId,
          requesterId: a.senderId,
          requesterName: a.senderName,
          via: 'agent',
        },
      );
      return request.id;
    },
    async status(id) {
      const request = await approvals.get(id);
      if (!request) return 'closed';
      if (request.status === 'pending') return 'pending';
      return request.status === 'allow-once' || request.status === 'allow-always' ? 'approved' : 'closed';
    },
  };
}

export function createUsageService(store: Store, config: () => WardenConfig, approvals?: Pick<ApprovalService, 'open' | 'get'>): UsageService {
  return new UsageService({ store: new UsageStore(store.db), config, ...(approvals ? { raises: raiseApprovals(approvals) } : {}) });
}
