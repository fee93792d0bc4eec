import type { PairingDecision } from '../../src/gateway/pairing-decision.js';

/**
 * The owners' pairing card: Approve/Deny buttons for one pairing code. The button id carries the
 * decision and the code only; who clicked comes from the platform, and whether they may decide
 * is `decidePairing`'s question (pairing-decision.ts), as for `/pair`.
 */

/** Button custom_id (Discord) / action_id (Slack): `warden-pair:<approve|deny>:<code>`. */
export const PAIRING_BUTTON_PREFIX = 'warden-pair:';

export const pairingButtonId = (decision: PairingDecision, code: string) => `${PAIRING_BUTTON_PREFIX}${decision}:${code}`;

/** The decision and code of a button id of ours, else undefined (a forged or foreign id). */
export function decodePairingButton(customId: string): { decision: PairingDecision; code: string } | undefined {
  if (!customId.startsWith(PAIRING_BUTTON_PREFIX)) return undefined;
  const rest = customId.slice(PAIRING_BUTTON_PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon < 0) return undefined;
  const decision = rest.slice(0, colon);
  const code = rest.slice(colon + 1);
  if ((decision !== 'approve' && decision !== 'deny') || code.length === 0 || code.length > 16) return undefined;
  return { decision, code };
}

/** What an adapter asks the app about a click; `text` is what the clicker is told, `final` whether the card is done. */
export type PairingClickHandler = (click: { decision: PairingDecision; code: string; userId: string }) => Promise<{ final: boolean; text: string }>;
