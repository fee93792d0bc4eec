// MCP tools under the tool policy, tried as an operator's policy would be sidestepped: a server
// naming its tools after core or meta tools, a deny written for plugins or for bundle-mcp, a
// `<server>__*` glob, an allowlist naming one tool of a server that has not listed yet, and the
// profiles. Every layer must treat an MCP tool as it treats any tool; nothing an MCP server
// names can take a core tool's place.
import { describe, expect, it } from 'vitest';
import { fate, surface } from '../../src/policy/testing.js';
import type { ToolMeta } from '../../src/tools/types.js';
import { placeholderId, toolId } from '../../src/mcp/names.js';

const mcp = (server: string, tool: string): ToolMeta => ({
  id: toolId(server, tool, new Set()),
  label: tool,
  description: tool,
  section: 'plugins',
  profiles: [],
  inWardenGroup: false,
  ownerOnly: false,
  source: { kind: 'mcp', server },
});
const placeholder = (server: string): ToolMeta => ({ ...mcp(server, 'x'), id: placeholderId(server), source: { kind: 'mcp', server, placeholder: true } });

const TOOLS = [mcp('gh', 'create_issue'), mcp('gh', 'delete_repo'), mcp('evil', 'exec'), mcp('tool', 'search'), placeholder('jira')];
const run = (tools: Record<string, unknown>, channel?: Record<string, unknown>) =>
  surface({ tools, ...(channel ? { channels: { web: { tools: channel } } } : {}) }, {}, { plugins: TOOLS });

describe('an MCP server cannot take a core or meta tool\'s place', () => {
  it('its tools always carry the server prefix', () => {
    expect(TOOLS.map((t) => t.id)).toEqual(['gh__create_issue', 'gh__delete_repo', 'evil__exec', 'tool__search', 'jira__*']);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['allow: [exec] keeps core exec only', { profile: 'full', allow: ['exec'] }, 'evil__exec', 'tools.allow'],
    ['deny: [exec] removes core exec, not a server tool named exec, but allow stays explicit', { profile: 'coding', deny: ['exec'] }, 'evil__exec', 'kept'],
    ['allow: [tool_search] does not allow tool__search', { profile: 'full', allow: ['tool_search'] }, 'tool__search', 'tools.allow'],
  ])('%s', (_what, tools, id, expected) => {
    expect(fate(run(tools), id)).toBe(expected);
  });
});

describe('policy entries that reach MCP tools', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown> | undefined, Record<string, string>]>([
    ['deny bundle-mcp removes every MCP tool and placeholder', { profile: 'coding', deny: ['bundle-mcp'] }, undefined, { gh__create_issue: 'tools.deny', evil__exec: 'tools.deny', 'jira__*': 'tools.deny', exec: 'kept' }],
    ['deny group:plugins removes them too (MCP tools are plugin-kind)', { profile: 'coding', deny: ['group:plugins'] }, undefined, { gh__delete_repo: 'tools.deny', 'jira__*': 'tools.deny', read: 'kept' }],
    ['a <server>__* glob removes that server only', { profile: 'coding', deny: ['gh__*'] }, undefined, { gh__create_issue: 'tools.deny', gh__delete_repo: 'tools.deny', evil__exec: 'kept' }],
    ['a per-channel deny applies as to any tool', { profile: 'coding' }, { deny: ['gh__delete_*'] }, { gh__delete_repo: 'channels.web.tools.deny', gh__create_issue: 'kept' }],
    ['the minimal profile has no MCP tool', { profile: 'minimal' }, undefined, { gh__create_issue: 'tools.profile', 'jira__*': 'tools.profile' }],
    ['an allowlist naming one tool of a server keeps only that one', { profile: 'minimal', alsoAllow: ['gh__create_issue'] }, undefined, { gh__create_issue: 'kept', gh__delete_repo: 'tools.profile' }],
    ['an allowlist naming a tool of a server not listed yet keeps its placeholder (unavailable until listed)', { profile: 'minimal', alsoAllow: ['jira__create_ticket'] }, undefined, { 'jira__*': 'kept' }],
    ['a deny naming one tool never removes the placeholder of the others', { profile: 'coding', deny: ['jira__delete_project'] }, undefined, { 'jira__*': 'kept' }],
  ])('%s', (_what, tools, channel, expected) => {
    const result = run(tools, channel);
    for (const [id, by] of Object.entries(expected)) expect([id, fate(result, id)]).toEqual([id, expect.stringContaining(by === 'kept' ? 'kept' : by)]);
  });
});
