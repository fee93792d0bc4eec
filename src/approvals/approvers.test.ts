import { describe, expect, it } from 'vitest';
import { approverRefusal, approversFor } from './approvers.js';

describe('approvers', () => {
  const owners = { discord: ['1'], slack: ['U1'] };

  it.each([
    ['owners when approvers are not set', { owners }, 'discord', ['1']],
    ['approvers override owners', { owners, approvers: { discord: ['2'] } }, 'discord', ['2']],
    ['an explicit empty list means nobody', { owners, approvers: { discord: [] } }, 'discord', []],
    ['other providers still fall back to owners', { owners, approvers: { discord: ['2'] } }, 'slack', ['U1']],
    ['unknown provider: nobody', { owners }, 'cli', []],
  ])('%s', (_label, config, provider, expected) => {
    expect(approversFor(config, provider)).toEqual(expected);
  });

  it.each([
    [{ owners }, 'discord', '1', undefined],
    [{ owners }, 'discord', '9', 'discord user 9 is not an approver (owners.discord)'],
    [{ owners, approvers: { discord: ['2'] } }, 'discord', '1', 'discord user 1 is not an approver (approvals.approvers.discord)'],
    [{ owners: {} }, 'web', 'me', 'no approvers are configured for web: set approvals.approvers.web (or owners.web)'],
  ])('refusal %#', (config, provider, user, expected) => {
    expect(approverRefusal(config, provider, user)).toBe(expected);
  });
});
