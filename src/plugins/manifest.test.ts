import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { config } from '../policy/testing.js';
import { loadPluginTools } from './manifest.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'warden-plugins-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function plugin(dir: string, file: string, body: string): void {
  mkdirSync(path.join(root, 'plugins', dir), { recursive: true });
  writeFileSync(path.join(root, 'plugins', dir, file), body);
}
const load = (plugins: Record<string, unknown> = {}) => loadPluginTools(config({ plugins: { paths: ['plugins'], ...plugins } }), root);

describe('plugin manifests', () => {
  it('reads warden.plugin.json and openclaw.plugin.json (JSON5) into tool definitions', () => {
    plugin(
      'a-jira',
      'warden.plugin.json',
      `{ id: "jira", contracts: { tools: ["jira_create", "Jira_Search"] },
         toolMetadata: { jira_create: { profiles: ["coding", "bogus"], description: "Create a Jira issue" }, Jira_Search: { optional: true } } }`,
    );
    plugin('b-gh', 'openclaw.plugin.json', '{"id": "github", "configSchema": {}, "contracts": {"tools": ["gh_issue"]}}');
    const result = load();
    expect(result.problems).toEqual([]);
    expect(result.plugins.map((p) => [p.id, p.tools])).toEqual([
      ['jira', ['jira_create', 'jira_search']],
      ['github', ['gh_issue']],
    ]);
    expect(result.tools[0]).toMatchObject({ id: 'jira_create', profiles: ['coding'], description: 'Create a Jira issue', optional: false, source: { kind: 'plugin', pluginId: 'jira' } });
    expect(result.tools[1]).toMatchObject({ id: 'jira_search', optional: true, profiles: [] });
  });

  it.each([
    ['plugins.deny', { deny: ['jira'] }],
    ['plugins.allow without it', { allow: ['github'] }],
    ['entries.<id>.enabled false', { entries: { jira: { enabled: false } } }],
  ])('%s leaves a plugin out', (_name, settings) => {
    plugin('jira', 'warden.plugin.json', '{"id": "jira", "contracts": {"tools": ["jira_create"]}}');
    expect(load(settings).tools).toEqual([]);
  });

  it('blocks a plugin whose id is a core tool name, and drops a tool name taken by core or an earlier plugin', () => {
    plugin('a', 'warden.plugin.json', '{"id": "exec", "contracts": {"tools": ["x_run"]}}');
    plugin('b', 'warden.plugin.json', '{"id": "one", "contracts": {"tools": ["read", "shared"]}}');
    plugin('c', 'warden.plugin.json', '{"id": "two", "contracts": {"tools": ["shared", "own"]}}');
    const result = load();
    expect(result.problems).toEqual([
      'plugin id conflicts with core tool name (exec)',
      'plugin tool name conflict (one): read',
      'plugin tool name conflict (two): shared',
    ]);
    expect(result.tools.map((t) => `${t.source.pluginId}:${t.id}`)).toEqual(['one:shared', 'two:own']);
  });

  it('drops a tool named like a Tool Search tool: it could never be called', () => {
    plugin('a', 'warden.plugin.json', '{"id": "search", "contracts": {"tools": ["tool_call", "Tool_Search", "find_docs"]}}');
    const result = load();
    expect(result.problems).toEqual(['plugin tool name conflict (search): tool_call', 'plugin tool name conflict (search): tool_search']);
    expect(result.tools.map((t) => t.id)).toEqual(['find_docs']);
  });

  it('reports a malformed manifest and keeps going', () => {
    plugin('a', 'warden.plugin.json', '{ id: ');
    plugin('b', 'warden.plugin.json', '{"contracts": {}}');
    plugin('c', 'warden.plugin.json', '{"id": "ok", "contracts": {"tools": ["web *"]}}');
    const result = load();
    expect(result.problems).toHaveLength(3);
    expect(result.problems[0]).toMatch(/warden\.plugin\.json is malformed/);
    expect(result.problems[1]).toMatch(/id must be a non-empty string/);
    expect(result.problems[2]).toBe('plugin tool is malformed (ok): "web *" is not a tool name');
    expect(result.plugins.map((p) => p.id)).toEqual(['ok']);
  });

  it('says when a configured path is missing', () => {
    expect(loadPluginTools(config({ plugins: { paths: ['nowhere'] } }), root).problems).toEqual(['plugins.paths: nowhere is not a directory']);
  });
});
