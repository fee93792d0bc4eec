import { describe, expect, it } from 'vitest';
import { SECTION_IDS } from '../tools/types.js';
import { CORE_GROUPS, CORE_TOOLS, coreGroupName, OWNER_ONLY_TOOLS, profileAllowlist } from './catalog.js';

describe('core catalog (semantics §1)', () => {
  it('holds the 34 Warden tools in catalog order', () => {
    expect(CORE_TOOLS.map((t) => t.id)).toEqual([
      'read', 'write', 'edit', 'apply_patch', 'exec', 'process', 'web_search', 'web_fetch', 'memory_search', 'memory_get',
      'sessions_list', 'sessions_history', 'sessions_search', 'conversations_list', 'conversations_send', 'conversations_turn', 'sessions_send', 'sessions_spawn', 'sessions_yield', 'subagents', 'session_status',
      'browser', 'message', 'cron', 'gateway', 'nodes', 'agents_list', 'progress_card', 'ask_user', 'image', 'pdf', 'image_generate', 'tts', 'secrets',
    ]);
  });

  it('gives every tool a label and a description, and sections in display order', () => {
    for (const tool of CORE_TOOLS) {
      expect(tool.label, tool.id).not.toBe('');
      expect(tool.description.length, tool.id).toBeGreaterThan(10);
    }
    const order = CORE_TOOLS.map((t) => SECTION_IDS.indexOf(t.section as (typeof SECTION_IDS)[number]));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it.each([
    ['fs', ['read', 'write', 'edit', 'apply_patch']],
    ['runtime', ['exec', 'process']],
    ['web', ['web_search', 'web_fetch']],
    ['memory', ['memory_search', 'memory_get']],
    ['sessions', ['sessions_list', 'sessions_history', 'sessions_search', 'conversations_list', 'conversations_send', 'conversations_turn', 'sessions_send', 'sessions_spawn', 'sessions_yield', 'subagents', 'session_status']],
    ['ui', ['browser']],
    ['messaging', ['message']],
    ['automation', ['cron', 'gateway']],
    ['nodes', ['nodes']],
    // ask_user sits in group:agents and the coding and messaging profiles, as in OpenClaw.
    ['agents', ['agents_list', 'progress_card', 'ask_user']],
    ['media', ['image', 'pdf', 'image_generate', 'tts']],
    ['secrets', ['secrets']],
  ])('group:%s = %j', (section, members) => {
    expect(CORE_GROUPS.get(`group:${section}`)).toEqual(members);
  });

  it('group:warden holds every tool except fs and runtime; group:openclaw is its alias', () => {
    const warden = CORE_GROUPS.get('group:warden');
    expect(warden).toEqual(CORE_TOOLS.map((t) => t.id).filter((id) => !['read', 'write', 'edit', 'apply_patch', 'exec', 'process'].includes(id)));
    expect(warden).toHaveLength(28);
    expect(coreGroupName('group:openclaw')).toBe('group:warden');
    expect(coreGroupName('group:nope')).toBeUndefined();
  });

  it.each([
    ['minimal', ['session_status']],
    [
      'coding',
      ['read', 'write', 'edit', 'apply_patch', 'exec', 'process', 'web_search', 'web_fetch', 'memory_search', 'memory_get', 'sessions_list',
        'sessions_history', 'sessions_search', 'conversations_list', 'conversations_send', 'conversations_turn', 'sessions_send', 'sessions_spawn', 'sessions_yield', 'subagents', 'session_status', 'cron', 'progress_card', 'ask_user', 'image', 'pdf',
        'image_generate', 'bundle-mcp'],
    ],
    ['messaging', ['sessions_list', 'sessions_history', 'sessions_search', 'conversations_list', 'conversations_send', 'conversations_turn', 'sessions_send', 'session_status', 'message', 'ask_user', 'bundle-mcp']],
  ] as const)('profile %s allows exactly %j', (profile, members) => {
    expect(profileAllowlist(profile)).toEqual(members);
  });

  it('profile full is no policy at all, not a list', () => {
    expect(profileAllowlist('full')).toBeUndefined();
  });

  it('marks exactly cron, gateway, nodes and the conversation tools owner-only (OpenClaw: GATEWAY_OWNER_ONLY_CORE_TOOLS)', () => {
    expect(CORE_TOOLS.filter((t) => t.ownerOnly).map((t) => t.id)).toEqual(['conversations_list', 'conversations_send', 'conversations_turn', 'cron', 'gateway', 'nodes']);
    expect(OWNER_ONLY_TOOLS).toEqual(['cron', 'gateway', 'nodes', 'conversations_list', 'conversations_send', 'conversations_turn']);
  });
});
