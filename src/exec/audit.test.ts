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
