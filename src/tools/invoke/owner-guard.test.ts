import { describe, expect, it } from 'vitest';
import { ownerOnlyRefusal } from './owner-guard.js';

describe('ownerOnlyRefusal', () => {
  it.each([
    ['cron', false, 'u1', 'Tool cron is restricted to owners and discord user u1 is not an owner (owners.discord). The tool call did not run.'],
    ['gateway', false, undefined, 'Tool gateway is restricted to owners and an unidentified discord sender is not an owner (owners.discord). The tool call did not run.'],
    ['nodes', false, 'u1', expect.stringContaining('Tool nodes is restricted to owners')],
    ['cron', true, 'u1', undefined],
    ['read', false, 'u1', undefined],
  ])('%s, owner=%s, sender=%s', (tool, owner, sender, expected) => {
    expect(ownerOnlyRefusal(tool, { senderIsOwner: owner, provider: 'discord', senderId: sender })).toEqual(expected);
  });
});
