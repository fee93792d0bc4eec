import { describe, expect, it } from 'vitest';
import type { TurnContext } from './context.js';
import { buildSteps, computeSteps, configStepCache, resolveAgent } from './steps.js';
import { resolveToolSurface } from './surface.js';
import { ALL_AVAILABLE, config, turn } from './testing.js';

/**
 * `buildSteps` hands the same steps to every turn with the same inputs; the surface keeps its
 * per-step answers by their identity. A cache that took one context for another would hand a
 * turn someone else's policy, so every field the steps read is varied here, one at a time, and
 * each answer must be the one computed afresh, and the surface the one a cold config gives.
 */
const raw = {
  owners: { discord: ['1'] },
  accessGroups: { ops: ['role:900'] },
  agents: { list: [{ id: 'main', tools: { deny: ['browser'] } }, { id: 'helper', tools: { deny: ['web_fetch'] } }] },
  tools: {
    profile: 'coding',
    byProvider: { 'openai/gpt-5': { deny: ['image'] }, anthropic: { deny: ['pdf'] } },
    toolsBySender: { 'id:7': { deny: ['exec'] }, 'username:mallory': { deny: ['write'] }, 'name:eve': { deny: ['read'] }, 'group:ops': { deny: ['edit'] }, 'usergroup:S1': { deny: ['memory_search'] } },
    sandbox: { tools: { deny: ['apply_patch'] } },
  },
  channels: {
    discord: {
      guilds: {
        '111': { tools: { deny: ['cron'] }, channels: { general: { tools: { deny: ['sessions_list'] } }, '222': { tools: { deny: ['sessions_send'] } } } },
        'my-team': { tools: { deny: ['gateway'] } },
      },
    },
    slack: { channels: { C0001: { tools: { deny: ['message'] } } } },
  },
} as const;

const base: TurnContext = turn({ provider: 'discord', chat: 'channel', guildId: '111', channelId: '999', channelName: 'random', senderId: '5', senderName: 'bob', senderUsername: 'bob' });

const variants: [string, Partial<TurnContext>][] = [
  ['the base context', {}],
  ['another agent', { agentId: 'helper' }],
  ['another model', { model: 'anthropic/claude' }],
  ['no model', { model: undefined }],
  ['another provider', { provider: 'slack', guildId: undefined, channelId: 'C0001' }],
  ['a DM', { chat: 'dm' }],
  ['a thread', { chat: 'thread', threadId: '333' }],
  ['another guild', { guildId: '112' }],
  ['a guild matched by name', { guildId: '113', guildName: 'My Team' }],
  ['a channel matched by id', { channelId: '222' }],
  ['a channel matched by name', { channelName: 'general' }],
  ['a channel name with a separator in it', { channelName: 'gen\u0000eral' }],
  ['a channel name that reads as JSON', { channelName: '","general' }],
  ['a sender by id', { senderId: '7' }],
  ['a sender by username', { senderUsername: 'mallory' }],
  ['a sender by display name', { senderName: 'eve' }],
  ['a sender with a role', { senderRoleIds: ['900'] }],
  ['a sender with another role', { senderRoleIds: ['901'] }],
  ['a sender in a user group', { senderUsergroupIds: ['S1'] }],
  ['sandboxed', { sandboxed: true }],
  ['a subagent', { spawnDepth: 1 }],
  ['a subagent with a parent surface', { spawnDepth: 1, inherited: { allow: ['read', 'exec'], deny: ['write'] } }],
  ['another parent surface', { spawnDepth: 1, inherited: { allow: ['read'], deny: [] } }],
];

describe('buildSteps: one steps array per distinct turn', () => {
  const cfg = config(raw);
  it.each(variants)('%s: the remembered steps are the ones computed afresh, twice over', (_name, over) => {
    const ctx = { ...base, ...over };
    const agent = resolveAgent(cfg, ctx.agentId)!;
    const first = buildSteps(cfg, ctx, agent);
    expect(first).toEqual(computeSteps(cfg, ctx, agent));
    // Asked again (after every other variant ran once in the loop below), the same array.
    for (const [, other] of variants) buildSteps(cfg, { ...base, ...other }, resolveAgent(cfg, other.agentId ?? 'main')!);
    expect(buildSteps(cfg, ctx, agent)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('every variant has steps of its own: no two distinct contexts share an array', () => {
    const arrays = variants.map(([, over]) => buildSteps(cfg, { ...base, ...over }, resolveAgent(cfg, over.agentId ?? 'main')!));
    expect(new Set(arrays).size).toBe(variants.length);
  });

  it.each(variants)('%s: the surface on a warm config is the surface on a cold one', (_name, over) => {
    const ctx = { ...base, ...over };
    for (const owner of [false, true]) {
      const warm = resolveToolSurface(cfg, { ...ctx, senderIsOwner: owner }, ALL_AVAILABLE);
      const cold = resolveToolSurface(config(raw), { ...ctx, senderIsOwner: owner }, ALL_AVAILABLE);
      expect({ tools: warm.tools, removed: warm.removed, warnings: warm.warnings, error: warm.error }).toEqual({ tools: cold.tools, removed: cold.removed, warnings: cold.warnings, error: cold.error });
    }
  });
});

describe('the config steps cache stays bounded over a long-lived process', () => {
  it('thousands of distinct models (a session may name any) keep at most its bound per config, and an evicted entry is computed again, the same', () => {
    const cfg = config(raw);
    const agent = resolveAgent(cfg, 'main')!;
    const first = computeSteps(cfg, turn({ ...base, model: 'openai/gpt-5' }), agent).slice(0, 6);
    for (let i = 0; i < 5_000; i++) computeSteps(cfg, turn({ ...base, model: `custom/model-${i}` }), agent);
    expect(configStepCache.size(cfg)).toBeLessThanOrEqual(256);
    expect(configStepCache.size(cfg)).toBeGreaterThan(0);
    // The first model's entry went long ago; asked again, the same steps come back.
    expect(computeSteps(cfg, turn({ ...base, model: 'openai/gpt-5' }), agent).slice(0, 6)).toEqual(first);
    // A model with a byProvider entry still gets its step after the churn.
    expect(JSON.stringify(first)).toContain('openai/gpt-5');
  });
});
