import { describe, expect, it } from 'vitest';
import { assignServerNames, placeholderId, toolId } from './names.js';

describe('MCP tool ids', () => {
  it.each<[string, string[], string]>([
    ['plain', ['github'], 'github'],
    ['case folded', ['GitHub'], 'github'],
    ['unsafe characters become -', ['my server.v2'], 'my-server-v2'],
    ['a leading digit gets a prefix', ['1password'], 'mcp-1password'],
    ['cut to 30 characters', ['a'.repeat(40)], 'a'.repeat(30)],
  ])('server name: %s', (_what, declared, safe) => {
    expect(assignServerNames(declared).get(declared[0]!)).toBe(safe);
  });

  it('a later server whose safe name is taken gets -2, case-insensitively; an earlier one keeps its name', () => {
    const names = assignServerNames(['GitHub', 'github', 'git.hub', 'git-hub']);
    expect([...names.values()]).toEqual(['github', 'github-2', 'git-hub', 'git-hub-2']);
  });

  it.each<[string, string, string[], string]>([
    ['server__tool', 'create_issue', [], 'gh__create_issue'],
    ['case folded', 'Create_Issue', [], 'gh__create_issue'],
    ['unsafe characters', 'issues/create', [], 'gh__issues-create'],
    ['a leading digit', '2fa_reset', [], 'gh__tool-2fa_reset'],
    ['taken: suffixed', 'create_issue', ['gh__create_issue'], 'gh__create_issue-2'],
    ['cut to 64', 'x'.repeat(100), [], `gh__${'x'.repeat(60)}`],
  ])('tool id: %s', (_what, tool, reserved, id) => {
    expect(toolId('gh', tool, new Set(reserved))).toBe(id);
  });

  it('an MCP tool can never take a core tool\'s name: every id has the server prefix', () => {
    expect(toolId('exec', 'exec', new Set())).toBe('exec__exec');
    expect(placeholderId('gh')).toBe('gh__*');
  });
});
