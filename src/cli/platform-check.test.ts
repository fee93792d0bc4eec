import { describe, expect, it } from 'vitest';
import { DISCORD_APP_FLAGS, discordIntentCheck, discordShardCheck, slackScopeCheck } from './platform-check.js';
import { SLACK_BOT_SCOPES } from './platform-setup.js';

const { GATEWAY_MESSAGE_CONTENT, GATEWAY_MESSAGE_CONTENT_LIMITED, GATEWAY_GUILD_MEMBERS } = DISCORD_APP_FLAGS;

describe("doctor's verdict on the Discord application's intent flags", () => {
  it.each([
    ['no flags', 0, false],
    ['only Server Members (Warden does not need it)', GATEWAY_GUILD_MEMBERS, false],
    ['Message Content (verified app)', GATEWAY_MESSAGE_CONTENT, true],
    ['Message Content limited (unverified app)', GATEWAY_MESSAGE_CONTENT_LIMITED, true],
    ['both bits and others', GATEWAY_MESSAGE_CONTENT | GATEWAY_MESSAGE_CONTENT_LIMITED | GATEWAY_GUILD_MEMBERS | 1, true],
  ])('%s', (_what, flags, ok) => {
    const check = discordIntentCheck(flags);
    expect(check.ok).toBe(ok);
    if (!ok) expect(check.fix).toContain('Privileged Gateway Intents');
  });
});

describe("doctor's verdict on the shard count", () => {
  const gateway = (shards: number, remaining = 1000) => ({ shards, session_start_limit: { remaining, reset_after: 3_600_000 } });
  it.each([
    ['absent, Discord recommends 1', undefined, gateway(1), { ok: true, detail: 'one connection (Discord recommends 1)' }],
    ['absent, Discord recommends 2', undefined, gateway(2), { ok: true, warn: true, detail: 'one connection, Discord recommends 2 shards' }],
    ['auto follows the recommendation', 'auto' as const, gateway(4), { ok: true, detail: 'auto: 4 shards (Discord recommends 4)' }],
    ['more than recommended', 3, gateway(2), { ok: true, detail: '3 shards (Discord recommends 2)' }],
    ['fewer than recommended', 2, gateway(5), { ok: true, warn: true, detail: '2 shards, Discord recommends 5 shards' }],
    ['fewer sessions left than shards', 4, gateway(1, 3), { ok: false, detail: '4 shards to open but only 3 gateway sessions left today' }],
    ["this process's shards of shardCount, as recommended", [1], gateway(2), { ok: true, detail: 'shard 1 of 2 shards (Discord recommends 2)' }],
    ['shard ids of fewer than recommended', [0, 1], gateway(4), { ok: true, warn: true, detail: 'shards 0, 1 of 2 shards, Discord recommends 4 shards' }],
    ['only the listed shards count against the sessions left', [0, 1], gateway(2, 1), { ok: false, detail: '2 shards to open but only 1 gateway sessions left today' }],
  ])('%s', (_what, setting, answer, expected) => {
    expect(discordShardCheck(setting, answer, Array.isArray(setting) ? 2 : undefined)).toMatchObject(expected);
  });
});

describe("doctor's verdict on the Slack token's scopes", () => {
  const all = SLACK_BOT_SCOPES.map((s) => s.scope);
  it.each([
    ['every manifest scope', all.join(','), true, undefined],
    ['every scope and more, with spaces', ` ${all.join(', ')}, users:read`, true, undefined],
    ['one missing', all.filter((s) => s !== 'chat:write').join(','), false, 'missing bot scopes: chat:write ('],
    ['none', '', false, `missing bot scopes: ${all[0]} (`],
  ])('%s', (_what, header, ok, detail) => {
    const check = slackScopeCheck(header);
    expect(check.ok).toBe(ok);
    if (detail) expect(check.detail.startsWith(detail)).toBe(true);
  });

  it('warns, without failing, when Slack does not say', () => {
    expect(slackScopeCheck(null)).toMatchObject({ ok: true, warn: true });
  });
});
