import { webApi } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackFake, type SlackFake } from '../../test/fakes/slack/index.js';
import { SlackUsergroupCache } from './usergroups.js';

// The real Web API client against the loopback Slack: the cache reads what Slack's methods answer.
let fake: SlackFake;
beforeAll(async () => {
  fake = await startSlackFake({ usergroups: { S0000OPS: ['U1', 'U2'], S0000DEV: ['U2'] } });
});
afterAll(async () => {
  await fake?.close();
});

function cache(now: () => number = Date.now, scopes?: readonly string[]) {
  if (scopes) fake.scopes = scopes;
  const client = new webApi.WebClient('xoxb-test', { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
  return new SlackUsergroupCache({ list: () => client.usergroups.list({}), users: (usergroup) => client.usergroups.users.list({ usergroup }) }, { now, ttlMs: 1000 });
}

describe('Slack user groups of a user', () => {
  it('reads every group once and answers from the cache until the TTL', async () => {
    let now = 0;
    const c = cache(() => now);
    const before = fake.calls('usergroups.users.list').length;
    expect(await c.usergroupsOf('U2')).toEqual(['S0000OPS', 'S0000DEV']);
    expect(await c.usergroupsOf('U1')).toEqual(['S0000OPS']);
    expect(await c.usergroupsOf('U9')).toEqual([]);
    expect(fake.calls('usergroups.users.list').length - before).toBe(2);
    fake.usergroups.S0000DEV = ['U2', 'U9'];
    // Cached: the change is not seen yet.
    expect(await c.usergroupsOf('U9')).toEqual([]);
    now += 1001;
    expect(await c.usergroupsOf('U9')).toEqual(['S0000DEV']);
  });

  it('a subteam_members_changed event drops the cache', async () => {
    const c = cache();
    expect(await c.usergroupsOf('U3')).toEqual([]);
    fake.usergroups.S0000OPS = ['U1', 'U2', 'U3'];
    c.invalidate();
    expect(await c.usergroupsOf('U3')).toEqual(['S0000OPS']);
  });

  it('without usergroups:read the lookup fails closed (no memberships known) and is tried again', async () => {
    const all = [...fake.scopes];
    const c = cache(Date.now, all.filter((s) => s !== 'usergroups:read'));
    expect(await c.usergroupsOf('U1')).toBeUndefined();
    fake.scopes = all;
    expect(await c.usergroupsOf('U1')).toEqual(['S0000OPS']);
  });
});
