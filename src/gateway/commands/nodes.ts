import type { ApproveOutcome } from '../approval-clicks.js';
import type { NodeHub } from '../../control/nodes/hub.js';
import type { Route } from '../router.js';
import type { ApprovalClick, OutboundMessage } from '../types.js';

export interface NodesCommandDeps {
  hub: () => NodeHub | undefined;
  /** The `/approve` decision path (an approver's click), bound to the sender's platform. */
  approve: (click: ApprovalClick) => Promise<ApproveOutcome>;
}

const USAGE = 'usage: /nodes [list] | /nodes approve CODE | /nodes deny CODE | /nodes unpair NAME';

/**
 * `/nodes` (owners only): the paired nodes, and the pairing and unpairing of nodes. `approve
 * CODE` decides the pairing whose node shows that code, through the same decision path as the
 * pairing card's buttons.
 */
export async function runNodesCommand(args: string, route: Route, deps: NodesCommandDeps): Promise<OutboundMessage> {
  if (!route.context.senderIsOwner) return { text: '/nodes is for owners.' };
  const hub = deps.hub();
  if (!hub) return { text: 'No node listener runs here: set gateway.nodes.enabled: true.' };
  const [verb = 'list', arg, ...extra] = args.split(/\s+/).filter(Boolean);
  if (extra.length > 0) return { text: USAGE };
  switch (verb.toLowerCase()) {
    case 'list': {
      const nodes = await hub.list();
      const pending = hub.pending();
      const lines = [
        nodes.length === 0 ? 'No paired nodes.' : 'Paired nodes:',
        ...nodes.map((n) => `- ${n.name}: ${n.online ? 'online' : `offline${n.lastSeen ? `, last seen ${n.lastSeen}` : ''}`} (paired by ${n.pairedBy})`),
        ...(pending.length ? ['Waiting to pair:', ...pending.map((p) => `- ${p.name}: code ${p.code}`)] : []),
      ];
      return { text: lines.join('\n') };
    }
    case 'approve':
    case 'deny': {
      if (!arg) return { text: USAGE };
      const approvalId = hub.approvalForCode(arg);
      if (!approvalId) return { text: `No node is waiting to pair with code ${arg}.` };
      const outcome = await deps.approve({ approvalId, decision: verb.toLowerCase() === 'approve' ? 'allow-once' : 'deny', userId: route.context.senderId ?? '' });
      if (outcome.kind === 'resolved') return { text: verb.toLowerCase() === 'approve' ? `Pairing ${arg} approved: the node gets its token.` : `Pairing ${arg} denied.` };
      if (outcome.kind === 'not-approver') return { text: 'You may not decide this pairing.' };
      if (outcome.kind === 'already-resolved') return { text: `Pairing ${arg} was already decided.` };
      return { text: `Pairing ${arg} is no longer waiting.` };
    }
    case 'unpair': {
      if (!arg) return { text: USAGE };
      return { text: (await hub.unpair(arg, `${route.context.provider}:${route.context.senderId ?? ''}`)).message };
    }
    default:
      return { text: USAGE };
  }
}
