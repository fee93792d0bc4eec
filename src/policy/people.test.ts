import { describe, expect, it } from 'vitest';
import { describeTarget } from '../tools/core/cron/target.js';
import { deciderIn, personIn } from './people.js';

describe('people named as the conversation shows them', () => {
  it.each([
    ['web', 'local', 'you'],
    ['discord', '123', '<@123>'],
    ['slack', 'U1', '<@U1>'],
    ['cli', 'root', 'root'],
  ])('%s user %s is %s', (provider, id, name) => {
    expect(personIn(provider, id)).toBe(name);
  });

  it.each([
    ['web', 'web:local', 'you'],
    ['discord', 'discord:123', '<@123>'],
    ['discord', 'cli:root', 'cli:root'],
    ['slack', 'discord:123', 'discord:123'],
    ['slack', 'U1', '<@U1>'],
  ])('in %s, the decider %s reads %s (as on the card)', (provider, decidedBy, name) => {
    expect(deciderIn(provider, decidedBy)).toBe(name);
  });

  it.each([
    [{ sessionKey: 'k', provider: 'web', chat: 'dm' as const, dmUserId: 'local' }, 'DM with you'],
    [{ sessionKey: 'k', provider: 'discord', chat: 'dm' as const, dmUserId: '42' }, 'DM with <@42>'],
    [{ sessionKey: 'k', provider: 'slack', chat: 'channel' as const, channelId: 'C1', channelName: 'ops' }, '#ops'],
  ])('a cron target %j reads "%s"', (target, text) => {
    expect(describeTarget(target)).toBe(text);
  });
});
