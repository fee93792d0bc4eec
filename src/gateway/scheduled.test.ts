import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { CronJob } from '../cron/jobs.js';
import { resolveToolSurface } from '../policy/surface.js';
import { surfaceInputs } from '../app/surface-inputs.js';
import { routeForCronJob } from './scheduled.js';

const config = (() => {
  const r = parseConfig({
    owners: { discord: ['1'] },
    models: { default: 'anthropic/claude-sonnet-4-5' },
    tools: { profile: 'coding' },
    channels: { discord: { guilds: { G1: { tools: { allow: ['*'] }, channels: { general: { tools: { deny: ['exec', 'process'] } } } } } } },
  });
  if (!r.ok) throw r.error;
  return r.value.config;
})();

const job = (target: Partial<CronJob['target']>): CronJob => ({
  id: 'j1',
  agentId: 'main',
  name: 'digest',
  schedule: { kind: 'every', everyMs: 3_600_000 },
  message: 'post the digest',
  target: { sessionKey: 'agent:main:discord:channel:c1', provider: 'discord', chat: 'channel', ...target },
  createdBy: '1',
  createdAt: 0,
  enabled: true,
  missed: 'skip',
  nextRunAt: undefined,
  lastRunAt: undefined,
  lastStatus: undefined,
  lastError: undefined,
  runCount: 0,
});

describe('routeForCronJob', () => {
  it('runs in the conversation it was created in, as a non-owner, with the job as sender', () => {
    const route = routeForCronJob(config, job({ guildId: 'G1', channelId: 'c1', channelName: 'general', threadId: 't1', chat: 'thread' }));
    expect(route.replyTo).toEqual({ provider: 'discord', channelId: 'c1', threadId: 't1', dmUserId: undefined });
    expect(route.context).toMatchObject({ senderId: 'cron:j1', senderIsOwner: false, chat: 'thread', guildId: 'G1', channelName: 'general', model: 'anthropic/claude-sonnet-4-5' });
    expect(route.text).toBe('Scheduled job "digest" (j1) fired. Do this now: post the digest');
  });

  it('keeps the channel policy: a job created in #general gets no exec, and no owner tools', () => {
    const route = routeForCronJob(config, job({ guildId: 'G1', channelId: 'c1', channelName: 'general' }));
    const surface = resolveToolSurface(config, route.context, surfaceInputs(config, '.'));
    expect(surface.removed).toEqual(expect.arrayContaining([{ tool: 'exec', by: 'channels.discord.guilds.G1.channels.general.tools.deny' }]));
    // A job's turn is no owner: the owner-only tools do not exist for it, not even as removed.
    for (const id of ['cron', 'gateway', 'nodes']) expect([...surface.tools, ...surface.removed.map((r) => r.tool)]).not.toContain(id);
  });

  it('answers a DM job in the DM', () => {
    const route = routeForCronJob(config, job({ chat: 'dm', channelId: 'd9', dmUserId: '1', sessionKey: 'agent:main:discord:direct:1' }));
    expect(route.replyTo).toMatchObject({ channelId: 'd9', dmUserId: '1' });
  });
});
