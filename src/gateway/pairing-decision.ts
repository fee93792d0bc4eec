import type { PairingStore } from '../cluster/pairing.js';
import { log } from '../log/log.js';

/**
 * An owner's decision on a DM pairing code, however it is made: `/pair <code>` typed in chat and
 * the Approve/Deny buttons of the owners' pairing card both come here, with who decides and
 * whether they are an owner on the code's platform. Only an owner decides; the store's
 * conditional delete makes the first decision the only one, across instances on one store.
 */
export type PairingDecision = 'approve' | 'deny';

export interface PairingDecisionInput {
  provider: string;
  code: string;
  decision: PairingDecision;
  /** Who decides: their id on `provider`, and whether they are an owner there (read from the config by the caller). */
  by: { userId: string; isOwner: boolean };
}

export type PairingDecisionOutcome =
  | { kind: 'approved' | 'denied'; userId: string; userName?: string | undefined }
  | { kind: 'not-owner' }
  | { kind: 'unknown-code' }
  | { kind: 'other-platform' };

export type PairingDecider = Pick<PairingStore, 'approve' | 'deny'>;

export async function decidePairing(store: PairingDecider, input: PairingDecisionInput): Promise<PairingDecisionOutcome> {
  if (!input.by.isOwner) {
    log.info({ provider: input.provider, userId: input.by.userId }, 'pairing decision refused: not an owner');
    return { kind: 'not-owner' };
  }
  const by = `${input.provider}:${input.by.userId}`;
  const outcome = input.decision === 'approve' ? await store.approve(input.code, input.provider, by) : await store.deny(input.code, input.provider);
  if (!outcome.ok) return { kind: outcome.reason };
  log.info({ provider: input.provider, by, userId: outcome.userId, decision: input.decision }, 'pairing request decided');
  return { kind: input.decision === 'approve' ? 'approved' : 'denied', userId: outcome.userId, userName: outcome.userName };
}

const who = (o: { userId: string; userName?: string | undefined }) => (o.userName ? `${o.userName} (${o.userId})` : o.userId);

/** What the decider is told: the same words for `/pair` and for a click. */
export function pairingDecisionText(outcome: PairingDecisionOutcome): string {
  switch (outcome.kind) {
    case 'approved':
      return `Paired ${who(outcome)}: their direct messages are let in from now on.`;
    case 'denied':
      return `Denied the pairing request of ${who(outcome)}: they are not let in.`;
    case 'not-owner':
      return 'Only an owner of this Warden can decide pairing requests.';
    case 'other-platform':
      return 'That code was handed out on another platform; approve it there.';
    case 'unknown-code':
      return 'No pairing request has that code (it may have expired or been decided already).';
  }
}

/** What the owners' card asks: who wants in, and the code `/pair` would take. */
export interface PairingCardRequest {
  code: string;
  userId: string;
  userName?: string | undefined;
  expiresAt: number;
  /** The owners on this platform the card goes to, by DM (plain user ids). */
  ownerIds: string[];
}

export function pairingCardText(request: Omit<PairingCardRequest, 'ownerIds'>): string {
  return `Pairing request: ${who(request)} wants to talk to this Warden by direct message. Code ${request.code} (expires ${new Date(request.expiresAt).toISOString().slice(11, 16)} UTC). Approve or deny below, or type /pair ${request.code}.`;
}
