import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { createAgentWorkspaces } from './workspaces.js';

const configOf = (raw: Record<string, unknown>, dir: string) => {
  const r = parseConfig(raw, path.join(dir, 'warden.config.yaml'));
  if (!r.ok) throw r.error;
  return r.value.config;
};

describe('createAgentWorkspaces (warden start and warden node)', () => {
  it('creates every agent’s workspace, nested and relative to the config folder', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-ws-'));
    const config = configOf({ agents: { defaults: { workspace: 'a/b/workspace' }, list: [{ id: 'main' }, { id: 'ops', workspace: path.join(dir, 'ops-ws') }] } }, dir);
    expect(createAgentWorkspaces(config, dir)).toEqual({ ok: true });
    expect(existsSync(path.join(dir, 'a/b/workspace'))).toBe(true);
    expect(existsSync(path.join(dir, 'ops-ws'))).toBe(true);
    // Existing folders are fine.
    expect(createAgentWorkspaces(config, dir)).toEqual({ ok: true });
  });

  it('names the folder and the agent when it cannot be created', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-ws-'));
    writeFileSync(path.join(dir, 'file'), '');
    const config = configOf({ agents: { defaults: { workspace: 'file/workspace' } } }, dir);
    const r = createAgentWorkspaces(config, dir);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(new RegExp(`^workspace ${path.join(dir, 'file/workspace')} of agent main cannot be created: `));
  });
});
