import { describe, expect, it } from 'vitest';
import { CORE_TOOLS } from './catalog.js';
import type { ToolMeta } from '../tools/types.js';
import type { TurnContext } from './context.js';
import { config, fate, surface, turn, ALL_AVAILABLE } from './testing.js';
import { inheritFrom, resolveToolSurface } from './surface.js';

const ALL = CORE_TOOLS.map((t) => t.id);
const pluginTool = (id: string, pluginId: string, extra: Partial<ToolMeta> & { optional?: boolean } = {}): ToolMeta => ({
  id,
  label: id,
  description: '',
  section: 'plugins',
  profiles: [],
  inWardenGroup: false,
  ownerOnly: false,
  source: { kind: 'plugin', pluginId },
  ...extra,
});
const owner = { owners: { discord: ['42'] } };
const asOwner = { provider: 'discord', senderId: '42', senderIsOwner: true } as const;

describe('profiles (step 1, tools.profile)', () => {
  it.each([
    ['minimal', ['session_status']],
    ['messaging', ['ask_user', 'conversations_list', 'conversations_send', 'conversations_turn', 'message', 'session_status', 'sessions_history', 'sessions_list', 'sessions_search', 'sessions_send']],
    [
      'coding',
      ['apply_patch', 'ask_user', 'conversations_list', 'conversations_send', 'conversations_turn', 'cron', 'edit', 'exec', 'image', 'image_generate', 'memory_get', 'memory_search', 'pdf', 'process', 'progress_card', 'read',
        'session_status', 'sessions_history', 'sessions_list', 'sessions_search', 'sessions_send', 'sessions_spawn', 'sessions_yield', 'subagents',
        'web_fetch', 'web_search', 'write'],
    ],
    ['full', [...ALL].sort()],
  ] as const)('an owner with profile %s on an OpenAI model gets exactly %j', (profile, expected) => {
    const result = surface({ ...owner, tools: { profile } }, asOwner);
    expect(result.tools).toEqual(expected);
    for (const r of result.removed) expect(r.by).toBe('tools.profile');
  });

  it('no profile keeps every tool', () => {
    expect(surface(owner, asOwner).tools).toEqual([...ALL].sort());
  });

  it("the agent's profile overrides the global one", () => {
    const raw = { tools: { profile: 'coding' }, agents: { list: [{ id: 'ops', tools: { profile: 'messaging' } }, { id: 'dev' }] } };
    expect(surface(raw, { agentId: 'ops' }).tools).toContain('message');
    expect(surface(raw, { agentId: 'ops' }).tools).not.toContain('exec');
    expect(surface(raw, { agentId: 'dev' }).tools).toContain('exec');
    expect(fate(surface(raw, { agentId: 'ops' }), 'exec')).toBe('tools.profile');
  });

  it('alsoAllow adds a tool through the profile, and is the only way to go beyond it', () => {
    expect(fate(surface({ tools: { profile: 'coding', alsoAllow: ['browser'] } }), 'browser')).toBe('kept');
    // A global allow cannot bring back what the profile removed: steps only filter.
    expect(fate(surface({ tools: { profile: 'coding', allow: ['browser', 'read'] } }), 'browser')).toBe('tools.profile');
  });

  it("the agent's alsoAllow replaces the global one", () => {
    const raw = { tools: { profile: 'coding', alsoAllow: ['browser'] }, agents: { list: [{ id: 'main', tools: { alsoAllow: ['tts'] } }] } };
    const result = surface(raw);
    expect([fate(result, 'tts'), fate(result, 'browser')]).toEqual(['kept', 'tools.profile']);
  });

  it('allow and alsoAllow in one scope is a config error', () => {
    expect(() => config({ tools: { allow: ['read'], alsoAllow: ['browser'] } })).toThrow(/tools\.alsoAllow: allow and alsoAllow cannot both be set/);
    expect(() => config({ agents: { list: [{ id: 'a', tools: { allow: ['read'], alsoAllow: ['x'] } }] } })).toThrow(/agents\.list\[0\]\.tools\.alsoAllow/);
  });

  it('an unknown profile is a config error', () => {
    expect(() => config({ tools: { profile: 'developer' } })).toThrow(/tools\.profile: unknown profile "developer"/);
  });

  it('plugin tools join a profile through their manifest profiles', () => {
    const plugins = [pluginTool('jira_create', 'jira', { profiles: ['coding'] }), pluginTool('jira_admin', 'jira')];
    const result = surface({ tools: { profile: 'coding' } }, {}, { ...ALL_AVAILABLE, plugins });
    expect([fate(result, 'jira_create'), fate(result, 'jira_admin')]).toEqual(['kept', 'tools.profile']);
  });
});

describe('the pipeline steps', () => {
  it('deny beats allow in one step', () => {
    expect(fate(surface({ tools: { allow: ['exec', 'read'], deny: ['exec'] } }), 'exec')).toBe('tools.deny');
  });

  it('a later step never brings a tool back', () => {
    const raw = { tools: { deny: ['exec'] }, agents: { list: [{ id: 'main', tools: { allow: ['exec', 'read'] } }] } };
    const result = surface(raw);
    expect(fate(result, 'exec')).toBe('tools.deny');
    expect(result.tools).toEqual(['read']);
  });

  it.each([
    ['global deny', { tools: { deny: ['browser'] } }, {}, 'tools.deny'],
    ['global byProvider provider/model', { tools: { byProvider: { 'openai/gpt-5': { deny: ['browser'] } } } }, {}, 'tools.byProvider["openai/gpt-5"].deny'],
    ['global byProvider provider', { tools: { byProvider: { OpenAI: { deny: ['browser'] } } } }, {}, 'tools.byProvider.OpenAI.deny'],
    ['byProvider of another model', { tools: { byProvider: { 'openai/gpt-4o': { deny: ['browser'] } } } }, {}, 'kept'],
    ['byProvider profile', { tools: { byProvider: { openai: { profile: 'minimal' } } } }, {}, 'tools.byProvider.profile'],
    ['agent deny', { agents: { list: [{ id: 'main', tools: { deny: ['browser'] } }] } }, {}, 'agents.list[0].tools.deny'],
    ['agent byProvider', { agents: { list: [{ id: 'main', tools: { byProvider: { openai: { deny: ['browser'] } } } }] } }, {}, 'agents.list[0].tools.byProvider.openai.deny'],
    ['web channel scope', { channels: { web: { tools: { deny: ['browser'] } } } }, {}, 'channels.web.tools.deny'],
    ['global toolsBySender', { tools: { toolsBySender: { 'id:7': { deny: ['browser'] } } } }, { senderId: '7' }, 'tools.toolsBySender["id:7"].deny'],
    ['sandbox policy when sandboxed', { tools: { sandbox: { tools: { deny: ['browser'] } } } }, { sandboxed: true }, 'tools.sandbox.tools.deny'],
    ['sandbox policy when not sandboxed', { tools: { sandbox: { tools: { deny: ['browser'] } } } }, { sandboxed: false }, 'kept'],
    ['subagents.tools deny', { tools: { subagents: { tools: { deny: ['browser'] } } } }, { spawnDepth: 1 }, 'tools.subagents.tools.deny'],
    ['runtime toolsAllow', {}, { toolsAllow: [['read']] }, 'before_prompt_build toolsAllow'],
  ] as const)('%s removes browser with its label', (_name, raw, ctx, expected) => {
    expect(fate(surface(raw as Record<string, unknown>, ctx as Partial<TurnContext>), 'browser')).toBe(expected);
  });

  it('web_* globs select the web tools', () => {
    expect(surface({ tools: { allow: ['web_*'] } }).tools).toEqual(['web_fetch', 'web_search']);
  });

  it("byProvider's provider/model key is tried before the provider key", () => {
    const raw = { tools: { byProvider: { openai: { deny: ['read'] }, 'openai/gpt-5': { deny: ['edit'] } } } };
    const result = surface(raw);
    expect([fate(result, 'read'), fate(result, 'edit')]).toEqual(['kept', 'tools.byProvider["openai/gpt-5"].deny']);
  });

  it('a sender policy of the agent beats the global one', () => {
    const raw = {
      tools: { toolsBySender: { 'id:7': { deny: ['read'] } } },
      agents: { list: [{ id: 'main', tools: { toolsBySender: { 'id:7': { deny: ['edit'] } } } }] },
    };
    const result = surface(raw, { senderId: '7' });
    expect([fate(result, 'read'), fate(result, 'edit')]).toEqual(['kept', 'agents.list[0].tools.toolsBySender["id:7"].deny']);
  });

  it.each([
    ['an owner', asOwner, ALL],
    // For a non-owner the owner-only tools are not candidates at all (hideOwnerOnly).
    ['a non-owner', {}, ALL.filter((id) => !CORE_TOOLS.find((t) => t.id === id)!.ownerOnly)],
  ] as const)('every removal carries a label, and removed + tools + unavailable cover the candidates, for %s', (_who, ctx, candidates) => {
    const result = surface({ ...owner, tools: { profile: 'coding', deny: ['exec'] } }, { model: 'anthropic/claude', ...ctx });
    const all = [...result.tools, ...result.removed.map((r) => r.tool), ...result.unavailable.map((u) => u.tool)].sort();
    expect(all).toEqual([...candidates].sort());
    for (const r of result.removed) expect(r.by).not.toBe('');
  });
});

describe('pre-filters', () => {
  it.each([
    ['voice', 'tts', 'message-provider'],
    ['discord-voice', 'tts', 'message-provider'],
    ['discord', 'tts', 'kept'],
  ])('message provider %s: %s → %s', (provider, tool, expected) => {
    expect(fate(surface({}, { provider }), tool)).toBe(expected);
  });

  it.each([
    ['openai/gpt-5', {}, 'kept'],
    ['anthropic/claude-sonnet-4-5', {}, 'model-provider'],
    [undefined, {}, 'model-provider'],
    ['anthropic/claude-sonnet-4-5', { exec: { applyPatch: { allowModels: ['anthropic/*'] } } }, 'kept'],
    ['openai/gpt-5', { exec: { applyPatch: { allowModels: ['anthropic/*'] } } }, 'model-provider'],
    ['openai/gpt-5-mini', { exec: { applyPatch: { allowModels: ['gpt-5*'] } } }, 'kept'],
    ['anthropic/claude', { exec: { applyPatch: { allowModels: [] } } }, 'kept'],
  ] as const)('apply_patch for model %s with %j → %s', (model, tools, expected) => {
    expect(fate(surface({ tools }, { model }), 'apply_patch')).toBe(expected);
  });

  it('a model without tool support gets no tools', () => {
    const result = surface({}, { modelSupportsTools: false });
    expect(result.tools).toEqual([]);
    expect(new Set(result.removed.map((r) => r.by))).toEqual(new Set(['model-provider']));
  });

  it.each([
    // Not even listed as removed: for a non-owner they do not exist.
    ['a non-owner', { provider: 'discord', senderId: '7', senderIsOwner: false }, 'absent'],
    ['no sender', { provider: 'discord', senderIsOwner: false }, 'absent'],
    ['an owner', asOwner, 'kept'],
  ] as const)('%s and cron, gateway, nodes', (_name, ctx, expected) => {
    const result = surface(owner, ctx);
    expect(['cron', 'gateway', 'nodes'].map((t) => fate(result, t))).toEqual([expected, expected, expected]);
  });

  it('a non-owner never sees cron, even when every layer allows it', () => {
    const raw = { ...owner, tools: { profile: 'coding', allow: ['cron', 'read'] }, agents: { list: [{ id: 'main', tools: { allow: ['*'] } }] } };
    const result = surface(raw, { provider: 'discord', senderId: '7' });
    expect(fate(result, 'cron')).toBe('absent');
    expect(result.trace('cron')).toEqual([]);
    expect(result.trace('automations')).toEqual([]);
    expect(surface(raw, asOwner).trace('cron').find((s) => s.step === 'owner-only')?.outcome).toBe('kept');
  });
});

describe('subagents', () => {
  const always = ['gateway', 'agents_list', 'session_status', 'cron', 'sessions_send', 'progress_card', 'conversations_list', 'conversations_send', 'conversations_turn'];
  const leaf = ['subagents', 'sessions_list', 'sessions_history', 'sessions_search', 'sessions_spawn'];

  it.each([
    ['main session (depth 0)', 0, 1, [], [...always, ...leaf]],
    ['leaf at depth 1 with the default maxSpawnDepth 1', 1, undefined, [...always, ...leaf], []],
    ['orchestrator at depth 1 of 2', 1, 2, always, leaf],
    ['leaf at depth 2 of 2', 2, 2, [...always, ...leaf], []],
  ] as const)('%s', (_name, depth, max, denied, kept) => {
    const raw = { ...owner, ...(max ? { agents: { defaults: { subagents: { maxSpawnDepth: max } } } } : {}) };
    const result = surface(raw, { ...asOwner, spawnDepth: depth });
    for (const t of denied) expect(fate(result, t), t).toBe('subagent deny list');
    for (const t of kept) expect(fate(result, t), t).toBe('kept');
  });

  it('configured allows never re-enable the hard-denied tools', () => {
    const raw = { ...owner, tools: { subagents: { tools: { allow: ['session_status', 'read'] } } } };
    const result = surface(raw, { ...asOwner, spawnDepth: 1 });
    expect(fate(result, 'session_status')).toBe('subagent deny list');
    expect(result.tools).toEqual(['read']);
  });

  it('a child never exceeds its parent', () => {
    const raw = { tools: { profile: 'coding' }, channels: { web: { tools: { deny: ['exec'] } } }, agents: { defaults: { subagents: { maxSpawnDepth: 3 } } } };
    const cfg = config(raw);
    let parent = resolveToolSurface(cfg, turn(), ALL_AVAILABLE);
    for (let depth = 1; depth <= 3; depth++) {
      const child = resolveToolSurface(cfg, turn({ spawnDepth: depth }), ALL_AVAILABLE);
      for (const t of child.tools) expect(parent.tools, `depth ${depth}: ${t}`).toContain(t);
      parent = child;
    }
  });

  it('a given parent surface is the ceiling: a child only keeps what the parent had', () => {
    const cfg = config({});
    const parent = resolveToolSurface(cfg, turn({ toolsAllow: [['read', 'web_fetch']] }), ALL_AVAILABLE);
    const child = resolveToolSurface(cfg, turn({ spawnDepth: 1, inherited: inheritFrom(parent) }), ALL_AVAILABLE);
    expect(child.tools).toEqual(['read', 'web_fetch']);
    expect(fate(child, 'exec')).toBe('inherited tools');
  });

  it('a parent without tools leaves its child without tools', () => {
    const child = resolveToolSurface(config({}), turn({ spawnDepth: 1, inherited: { allow: [], deny: [] } }), ALL_AVAILABLE);
    expect(child.tools).toEqual([]);
  });
});

describe('the empty explicit allowlist guard', () => {
  it.each([
    [
      'no registered tools matched',
      { tools: { allow: ['jira_*'] } },
      {},
      'No callable tools remain after resolving explicit tool allowlist (tools.allow: jira_*); no registered tools matched. Fix the allowlist or enable the plugin that registers the requested tool.',
    ],
    [
      'the selected model does not support tools',
      { tools: { allow: ['read'] }, channels: { web: { tools: { allow: ['read', 'edit'] } } } },
      { modelSupportsTools: false },
      'No callable tools remain after resolving explicit tool allowlist (tools.allow: read; group tools.allow: read, edit); the selected model does not support tools. Fix the allowlist or enable the plugin that registers the requested tool.',
    ],
    [
      'tools are disabled for this run',
      {},
      { disableTools: true, toolsAllow: [['read']] },
      'No callable tools remain after resolving explicit tool allowlist (runtime toolsAllow: read); tools are disabled for this run. Fix the allowlist or enable the plugin that registers the requested tool.',
    ],
  ] as const)('reason: %s', (_name, raw, ctx, message) => {
    const result = surface(raw as Record<string, unknown>, ctx as Partial<TurnContext>);
    expect(result.tools).toEqual([]);
    expect(result.error).toBe(message);
  });

  it.each([
    ['no explicit allowlist, only a profile that keeps nothing here', { tools: { profile: 'minimal', deny: ['session_status'] } }, {}],
    ['tools remain', { tools: { allow: ['read'] } }, {}],
    ['disabled tools with only config allowlists', { tools: { allow: ['read'] } }, { disableTools: true }],
  ] as const)('does not fire when %s', (_name, raw, ctx) => {
    expect(surface(raw as Record<string, unknown>, ctx).error).toBeUndefined();
  });

  it('judges the allowlist, not this machine: kept-but-unavailable tools are reported, not an error', () => {
    const result = surface({ tools: { allow: ['read'] } }, {}, { implemented: () => undefined });
    expect(result.error).toBeUndefined();
    expect(result.unavailable).toEqual([{ tool: 'read', why: 'not implemented in this build' }]);
    expect(result.warnings.some((w) => w.startsWith('no tool can be offered here'))).toBe(true);
  });
});

describe('warnings', () => {
  it.each([
    [
      'unknown entry',
      { tools: { allow: ['read', 'jira_create'] } },
      {},
      "tools: tools.allow allowlist contains unknown entries (jira_create). These entries won't match any tool unless the plugin is enabled.",
    ],
    [
      'gated core tool (apply_patch on a model it does not serve)',
      { tools: { allow: ['read', 'apply_patch'] } },
      { model: 'anthropic/claude' },
      'tools: tools.allow allowlist names shipped core tools unavailable in the current runtime/provider/model/config (apply_patch).',
    ],
    [
      'gated and unknown together',
      { agents: { list: [{ id: 'main', tools: { allow: ['read', 'apply_patch', 'nope'] } }] } },
      { model: 'anthropic/claude' },
      "tools: agents.main.tools.allow allowlist contains unknown entries (nope). They won't match any tool unless the plugin is enabled. It also names shipped core tools unavailable in the current runtime/provider/model/config (apply_patch).",
    ],
    [
      'unknown alsoAllow extra of the profile',
      { tools: { profile: 'coding', alsoAllow: ['browsr'] } },
      {},
      "tools: tools.profile allowlist contains unknown entries (browsr). These entries won't match any tool unless the plugin is enabled.",
    ],
    [
      'unknown group',
      { tools: { allow: ['group:filesystem'] } },
      {},
      "tools: tools.allow allowlist contains unknown entries (group:filesystem). These entries won't match any tool unless the plugin is enabled.",
    ],
  ] as const)('%s', (_name, raw, ctx, warning) => {
    expect(surface(raw as Record<string, unknown>, ctx).warnings).toContain(warning);
  });

  it("a profile's own baseline never warns (apply_patch gated on a non-OpenAI model)", () => {
    expect(surface({ tools: { profile: 'coding' } }, { model: 'anthropic/claude' }).warnings).toEqual([]);
  });

  it('an allowlist naming only plugin tools is kept (removes the core tools) and warns', () => {
    const plugins = [pluginTool('jira_create', 'jira')];
    const result = surface({ tools: { allow: ['jira'] } }, {}, { ...ALL_AVAILABLE, plugins });
    expect(result.tools).toEqual(['jira_create']);
    expect(result.warnings).toContain(
      'tools: tools.allow allowlist names only plugin tools (jira), so it removes every core tool. Did you mean tools.alsoAllow? alsoAllow adds tools to the profile without removing the others.',
    );
  });

  it('no implicit widening: tools.exec does not grant exec, and the surface says so', () => {
    const result = surface({ tools: { profile: 'messaging', exec: { security: 'full' } } });
    expect(fate(result, 'exec')).toBe('tools.profile');
    expect(result.warnings).toContain(
      'tools policy: profile "messaging" (agent "main") has a configured tools.exec section, which does not grant exec by itself. Add alsoAllow: ["exec", "process"] explicitly if the agent should run commands.',
    );
    expect(surface({ tools: { profile: 'messaging' } }).warnings).toEqual([]);
  });
});

describe('plugin tools', () => {
  it('group:plugins and bare plugin ids select plugin tools on the surface', () => {
    const plugins = [pluginTool('jira_create', 'jira'), pluginTool('gh_issue', 'github')];
    const result = surface({ tools: { deny: ['github'] } }, {}, { ...ALL_AVAILABLE, plugins });
    expect([fate(result, 'jira_create'), fate(result, 'gh_issue')]).toEqual(['kept', 'tools.deny']);
    expect(surface({ tools: { deny: ['group:plugins'] } }, {}, { ...ALL_AVAILABLE, plugins }).tools).not.toContain('jira_create');
  });

  it('an optional plugin tool joins only when an allowlist names it', () => {
    const plugins = [pluginTool('jira_admin', 'jira', { optional: true })];
    expect(fate(surface({}, {}, { ...ALL_AVAILABLE, plugins }), 'jira_admin')).toBe('plugin optional');
    expect(fate(surface({ tools: { profile: 'coding', alsoAllow: ['jira_admin'] } }, {}, { ...ALL_AVAILABLE, plugins }), 'jira_admin')).toBe('kept');
  });

  it('without a registered runtime a plugin tool is unavailable, and a core tool without implementation too', () => {
    const plugins = [pluginTool('jira_create', 'jira')];
    const result = surface({ tools: { allow: ['read', 'jira_create'] } }, {}, { plugins, implemented: (id) => (id === 'read' ? { ok: true } : undefined) });
    expect(result.tools).toEqual(['read']);
    expect(result.unavailable).toEqual([{ tool: 'jira_create', why: 'plugin runtime not loaded' }]);
    const none = surface({ tools: { allow: ['read'] } }, {}, { implemented: () => undefined });
    expect(none.unavailable).toEqual([{ tool: 'read', why: 'not implemented in this build' }]);
  });
});

describe('trace (--explain)', () => {
  it('names the filter or step and the config line that decided', () => {
    const result = surface({ tools: { deny: ['write'] } });
    const steps = result.trace('apply_patch');
    const decisive = steps.find((s) => s.outcome === 'removed');
    expect(decisive).toEqual({
      step: 'tools.allow',
      outcome: 'removed',
      rule: 'denied by tools.deny[0] = "write"; apply_patch follows write',
      key: 'tools.deny[0]',
      by: 'tools.deny',
    });
    expect(steps.map((s) => s.step)).toEqual([
      'disableTools', 'plugin optional', 'message-provider', 'model-provider', 'owner-only', 'tools.profile', 'tools.byProvider.profile',
      'tools.allow', 'tools.byProvider.allow', 'agents.main.tools.allow', 'agents.main.tools.byProvider.allow', 'group tools.allow',
      'tools.toolsBySender', 'sandbox tools.allow', 'subagent tools.allow', 'inherited tools',
    ]);
    expect(steps.slice(8).every((s) => s.outcome === 'not reached')).toBe(true);
  });

  it('ends a kept tool with its availability', () => {
    const result = resolveToolSurface(config({}), turn(), { implemented: () => ({ ok: false, why: 'Chromium is not installed' }) });
    expect(result.trace('browser').at(-1)).toEqual({ step: 'availability', outcome: 'removed', rule: 'unavailable: Chromium is not installed' });
  });

  it('an unknown agent is an error naming the known agents', () => {
    const result = surface({ agents: { list: [{ id: 'ops' }, { id: 'dev' }] } }, { agentId: 'qa' });
    expect(result.error).toBe('unknown agent "qa"; known agents: ops, dev');
  });
});

describe('the surface and its trace agree', () => {
  const plugins = [pluginTool('jira_create', 'jira', { profiles: ['coding'] }), pluginTool('jira_admin', 'jira', { optional: true }), pluginTool('gh_issue', 'github')];
  const raw = {
    ...owner,
    tools: { profile: 'coding', alsoAllow: ['browser', 'gh_*'], deny: ['write'], byProvider: { openai: { deny: ['pdf'] } }, toolsBySender: { 'id:7': { deny: ['edit'] } } },
    channels: { discord: { guilds: { '111': { tools: { deny: ['jira'] }, channels: { dev: { tools: { allow: ['*'] } } } } } } },
  };
  it.each([
    ['a non-owner in a guild', { provider: 'discord', chat: 'channel', guildId: '111', senderId: '7' }],
    ['an owner in #dev on another model', { provider: 'discord', chat: 'channel', guildId: '111', channelName: 'dev', senderId: '42', senderIsOwner: true, model: 'anthropic/x' }],
    ['a voice leaf subagent', { provider: 'voice', spawnDepth: 1 }],
    ['a runtime toolsAllow', { toolsAllow: [['read', 'jira_*', 'cron']] }],
  ] as const)('%s', (_name, ctx) => {
    const result = surface(raw, ctx as Partial<TurnContext>, { ...ALL_AVAILABLE, plugins });
    for (const { tool, by } of result.removed) {
      const removedAt = result.trace(tool).filter((s) => s.outcome === 'removed').map((s) => s.by);
      expect(removedAt, tool).toEqual([by]);
    }
    for (const tool of result.tools) expect(result.trace(tool).some((s) => s.outcome === 'removed'), tool).toBe(false);
  });
});
