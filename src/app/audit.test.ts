import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfigInput } from '../config/index.js';
import { auditExec } from './audit.js';

const BASE = '/srv/warden';
const STATE = { baseDir: BASE, dataDir: path.join(BASE, 'data'), configFile: path.join(BASE, 'warden.config.yaml') };

function findings(input: WardenConfigInput, state: typeof STATE | null = STATE) {
  const parsed = parseConfig({ owners: { web: ['op'] }, ...input });
  if (!parsed.ok) throw parsed.error;
  return auditExec(parsed.value.config, { hasBwrap: true, ...(state ? { state } : {}) }).filter((f) => f.id === 'workspace.contains-warden-state');
}

describe('auditExec: a workspace must not hold Warden\'s own state', () => {
  it.each<[string, WardenConfigInput, string[]]>([
    ['the default ./workspace', {}, []],
    ['a sibling directory', { agents: { defaults: { workspace: '../projects/app' } } }, []],
    ['the config directory itself', { agents: { defaults: { workspace: '.' } } }, ['main']],
    ['a parent of it', { agents: { defaults: { workspace: '..' } } }, ['main']],
    ['one agent of two', { agents: { list: [{ id: 'main' }, { id: 'ops', workspace: '/srv' }] } }, ['ops']],
  ])('%s', (_what, input, agents) => {
    const found = findings(input);
    expect(found.map((f) => f.severity)).toEqual(agents.map(() => 'critical'));
    for (const [i, agent] of agents.entries()) expect(found[i]!.message).toMatch(new RegExp(`workspace of agent ${agent} .* contains the data dir`));
  });
  it('names the config file and .env, and the data dir wherever it is', () => {
    const [finding] = findings({ agents: { defaults: { workspace: '.' } } }, { ...STATE, dataDir: '/var/lib/warden' });
    expect(finding!.message).toMatch(/contains the config file \/srv\/warden\/warden\.config\.yaml and the \.env file next to the config/);
    expect(finding!.message).not.toMatch(/data dir/);
  });
  it('stays quiet when the caller does not say where the state is', () => {
    expect(findings({ agents: { defaults: { workspace: '.' } } }, null)).toEqual([]);
  });
});

describe('auditExec: allowlist patterns that can never match', () => {
  const relative = (input: WardenConfigInput) => {
    const parsed = parseConfig(input);
    if (!parsed.ok) throw parsed.error;
    return auditExec(parsed.value.config, { hasBwrap: true }).filter((f) => f.id === 'exec.allowlist-relative-pattern');
  };
  it.each<[string, string, boolean]>([
    ['./deploy.sh', 'a dot-relative script', true],
    ['bin/tool', 'a relative path', true],
    ['../x', 'a parent-relative path', true],
    ['/usr/bin/git', 'an absolute path', false],
    ['~/bin/*', 'a home glob', false],
    ['git', 'a basename', false],
    ['*', 'the wildcard', false],
  ])('%s (%s) warns: %s', (pattern, _what, warns) => {
    const found = relative({ tools: { exec: { allowlist: [{ pattern }] } } });
    expect(found.map((f) => f.severity)).toEqual(warns ? ['warn'] : []);
    if (warns) expect(found[0]!.message).toContain(`tools.exec.allowlist[0].pattern "${pattern}" is a relative path`);
  });
  it("names an agent's own allowlist by its key", () => {
    const found = relative({ agents: { list: [{ id: 'main', tools: { exec: { allowlist: [{ pattern: '/bin/ls' }, { pattern: 'scripts/run' }] } } }] } });
    expect(found.map((f) => f.message.split(' ')[0])).toEqual(['agents.list[0].tools.exec.allowlist[1].pattern']);
  });
});
