import { describe, expect, it } from 'vitest';
import { decodePairingButton, pairingButtonId } from './pairing-card.js';

describe('pairing card button ids', () => {
  it('round-trips a decision and a code', () => {
    expect(decodePairingButton(pairingButtonId('approve', 'ABCDEFGH'))).toEqual({ decision: 'approve', code: 'ABCDEFGH' });
    expect(decodePairingButton(pairingButtonId('deny', 'ABCDEFGH'))).toEqual({ decision: 'deny', code: 'ABCDEFGH' });
  });

  // Forged or foreign ids decide nothing.
  it.each([
    'warden-pair:',
    'warden-pair:approve',
    'warden-pair:approve:',
    'warden-pair:allow:ABCDEFGH',
    'warden-pair:APPROVE:ABCDEFGH',
    `warden-pair:approve:${'A'.repeat(17)}`,
    'warden-secret:approve:ABCDEFGH',
    'approve:ABCDEFGH',
  ])('%s is not a pairing button', (id) => expect(decodePairingButton(id)).toBeUndefined());
});
