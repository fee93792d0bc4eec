import { describe, expect, it } from 'vitest';
import { coreTool } from './catalog.js';
import type { ToolMeta } from '../tools/types.js';
import { compilePolicy, decide, keeps as keepsFast, pickPolicy, type PolicyScope } from './policy.js';

const plugin = (id: string, pluginId: string): ToolMeta => ({
  id,
  label: id,
  description: '',
  section: 'plugins',
  profiles: [],
  inWardenGroup: false,
  ownerOnly: false,
  source: { kind: 'plugin', pluginId },
});
const mcp = (id: string): ToolMeta => ({ ...plugin(id, 'x'), source: { kind: 'mcp', server: 'srv' } });
const tool = (id: string): ToolMeta => coreTool(id) ?? plugin(id, 'p');

/** Whether a scope written as config keeps `id`. */
function keeps(scope: PolicyScope, id: string | ToolMeta): boolean {
  const policy = pickPolicy(structuredClone(scope), 'tools');
  if (!policy) return true;
  return decide(compilePolicy(policy), typeof id === 'string' ? tool(id) : id).kept;
}

describe('matching one policy (semantics §2)', () => {
  it.each([
    ['deny matches → removed', { deny: ['exec'] }, 'exec', false],
    ['deny beats allow in one step', { allow: ['exec'], deny: ['exec'] }, 'exec', false],
    ['deny glob beats an exact allow', { allow: ['web_fetch'], deny: ['web_*'] }, 'web_fetch', false],
    ['no allow list → kept', { deny: ['exec'] }, 'read', true],
    ['empty allow list → kept', { allow: [] }, 'read', true],
    ['allow matches → kept', { allow: ['read'] }, 'read', true],
    ['allow does not match → removed', { allow: ['read'] }, 'write', false],
    ['names are normalised: BASH allows exec', { allow: ['BASH'] }, 'exec', true],
    ['apply-patch spelling denies apply_patch', { deny: ['apply-patch'] }, 'apply_patch', false],
    ['automations (OpenClaw) denies cron', { deny: ['automations'] }, 'cron', false],
    ['* allows everything', { allow: ['*'] }, 'browser', true],
  ] as const)('%s', (_name, scope, id, expected) => {
    expect(keeps(scope, id)).toBe(expected);
  });

  it.each([
    ['web_*', 'web_search', true],
    ['web_*', 'web_fetch', true],
    ['web_*', 'read', false],
    ['sessions_*', 'sessions_spawn', true],
    ['sessions_*', 'session_status', false],
    ['session*', 'session_status', true],
    ['*_get', 'memory_get', true],
    ['{read,edit}', 'edit', true],
    ['{read,edit}', 'write', false],
  ])('glob %j vs %s → %s', (pattern, id, expected) => {
    expect(keeps({ allow: [pattern] }, id)).toBe(expected);
  });

  it.each([
    ['allow write admits apply_patch', { allow: ['write'] }, true],
    ['deny write removes apply_patch', { deny: ['write'] }, false],
    ['deny write beats allow apply_patch', { allow: ['apply_patch'], deny: ['write'] }, false],
    ['allow a glob matching write admits apply_patch', { allow: ['wri*'] }, true],
    ['deny apply_patch alone leaves write', { deny: ['apply_patch'] }, false],
    ['allow read only: apply_patch out', { allow: ['read'] }, false],
  ] as const)('apply_patch follows write both ways: %s', (_name, scope, expected) => {
    expect(keeps(scope, 'apply_patch')).toBe(expected);
  });

  it('a deny of apply_patch does not touch write', () => {
    expect(keeps({ deny: ['apply_patch'] }, 'write')).toBe(true);
  });

  it.each([
    ['deny write removes edit', { deny: ['write'] }, false],
    ['allow write admits edit', { allow: ['write'] }, true],
    ['deny write beats allow edit', { allow: ['edit'], deny: ['write'] }, false],
    ['allow edit alone keeps edit (a narrower grant than write)', { allow: ['edit'] }, true],
    ['deny edit removes edit', { deny: ['edit'] }, false],
  ] as const)('edit follows write both ways: %s', (_name, scope, expected) => {
    expect(keeps(scope, 'edit')).toBe(expected);
  });

  it.each([
    ['deny exec removes process', { deny: ['exec'] }, false],
    ['deny bash (exec) removes process', { deny: ['BASH'] }, false],
    ['deny exec beats allow process', { allow: ['process', 'exec'], deny: ['exec'] }, false],
    ['allow exec admits process', { allow: ['exec'] }, true],
    ['allow process without exec removes process', { allow: ['process', 'read'] }, false],
    ['allow exec and process keeps process', { allow: ['exec', 'process'] }, true],
    ['allow exec, deny process removes process', { allow: ['exec'], deny: ['process'] }, false],
    ['allow group:runtime keeps process', { allow: ['group:runtime'] }, true],
    ['no allowlist keeps process', { deny: ['read'] }, true],
  ] as const)('process requires exec: %s', (_name, scope, expected) => {
    expect(keeps(scope, 'process')).toBe(expected);
  });

  it.each([
    ['deny read removes image', { deny: ['read'] }, 'image', false],
    ['deny read removes pdf', { deny: ['read'] }, 'pdf', false],
    ['deny group:fs removes pdf (read is in it)', { deny: ['group:fs'] }, 'pdf', false],
    ['allow read does not ask for image', { allow: ['read'] }, 'image', false],
    ['allow image alone keeps image', { allow: ['image'] }, 'image', true],
    ['deny read beats allow pdf', { allow: ['pdf'], deny: ['read'] }, 'pdf', false],
  ] as const)('image and pdf follow a deny of read: %s', (_name, scope, id, expected) => {
    expect(keeps(scope, id)).toBe(expected);
  });

  it.each([
    ['deny image', { deny: ['image'] }, 'read'],
    ['deny edit', { deny: ['edit'] }, 'write'],
    ['deny apply_patch', { deny: ['apply_patch'] }, 'write'],
    ['deny process', { deny: ['process'] }, 'exec'],
  ] as const)('a follower never takes its leader with it: %s leaves %s', (_name, scope, leader) => {
    expect(keeps(scope, leader)).toBe(true);
  });

  it.each([
    [['write'], ['exec', 'read', 'process']],
    [['read'], ['exec', 'write', 'edit', 'memory_get', 'memory_search']],
    [['exec'], ['write', 'read', 'edit']],
  ] as const)('nothing beyond the table couples: deny %j keeps %j (exec can still write and read files)', (deny, kept) => {
    for (const id of kept) expect(keeps({ deny: [...deny] }, id), id).toBe(true);
  });

  it('a plugin tool named like a follower does not couple', () => {
    expect(keeps({ deny: ['write'] }, plugin('edit', 'docs'))).toBe(true);
    expect(keeps({ allow: ['exec'] }, plugin('process', 'ops'))).toBe(false);
  });

  it('the hot path and the verdict agree on every coupling', () => {
    const scopes: PolicyScope[] = [{ deny: ['write'] }, { deny: ['exec'] }, { deny: ['read'] }, { allow: ['write'] }, { allow: ['exec'] }, { allow: ['read'] }, { allow: ['process'] }, { allow: ['edit'] }, { allow: ['pdf'] }, { allow: ['*'], deny: ['exec'] }];
    for (const scope of scopes) {
      const compiled = compilePolicy(pickPolicy(structuredClone(scope), 'tools')!);
      for (const id of ['write', 'edit', 'apply_patch', 'exec', 'process', 'read', 'image', 'pdf']) expect(keepsFast(compiled, tool(id)), `${JSON.stringify(scope)} ${id}`).toBe(decide(compiled, tool(id)).kept);
    }
  });

  it.each([
    ['group:fs', 'edit', true],
    ['group:fs', 'exec', false],
    ['group:runtime', 'process', true],
    ['group:warden', 'browser', true],
    ['group:warden', 'read', false],
    ['group:openclaw', 'message', true],
    ['group:nope', 'read', false],
  ])('group %s expands before matching: %s → %s', (group, id, expected) => {
    expect(keeps({ allow: [group] }, id)).toBe(expected);
  });

  it.each([
    ['group:plugins matches a plugin tool', ['group:plugins'], plugin('jira_create', 'jira'), true],
    ['group:plugins does not match a core tool', ['group:plugins'], tool('read'), false],
    ['a bare plugin id matches that plugin', ['jira'], plugin('jira_create', 'jira'), true],
    ['a bare plugin id does not match another plugin', ['jira'], plugin('gh_issue', 'github'), false],
    ['bundle-mcp matches an MCP tool', ['bundle-mcp'], mcp('srv__search'), true],
    ['bundle-mcp does not match a plugin tool', ['bundle-mcp'], plugin('jira_create', 'jira'), false],
  ] as const)('%s', (_name, allow, meta, expected) => {
    expect(keeps({ allow: [...allow] }, meta)).toBe(expected);
  });
});

describe('a config scope as a policy (alsoAllow, reference §2.2)', () => {
  const shape = (scope: PolicyScope) => {
    const p = pickPolicy(scope, 'tools');
    return p && { allow: p.allow?.map((e) => e.name), deny: p.deny?.map((e) => e.name) };
  };
  it.each([
    ['nothing set → no policy', {}, undefined],
    ['empty alsoAllow alone → no policy', { alsoAllow: [] }, undefined],
    ['alsoAllow alone → allow * plus it', { alsoAllow: ['browser'] }, { allow: ['*', 'browser'], deny: undefined }],
    ['allow [] + alsoAllow → allow * plus it', { allow: [], alsoAllow: ['browser'] }, { allow: ['*', 'browser'], deny: undefined }],
    ['allow + alsoAllow → union', { allow: ['read'], alsoAllow: ['browser'] }, { allow: ['read', 'browser'], deny: undefined }],
    ['deny only', { deny: ['exec'] }, { allow: undefined, deny: ['exec'] }],
  ] as const)('%s', (_name, scope, expected) => {
    expect(shape(structuredClone(scope) as PolicyScope)).toEqual(expected);
  });

  it('remembers the key path of every entry', () => {
    const p = pickPolicy({ deny: ['read', 'exec'] }, 'agents.list[0].tools');
    expect(p?.deny?.map((e) => e.key)).toEqual(['agents.list[0].tools.deny[0]', 'agents.list[0].tools.deny[1]']);
  });
});
