import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WardenConfig } from '../config/index.js';
import { sessionSkillsCatalog } from './session-catalog.js';
import { SessionSkillSnapshots } from './snapshot.js';
import { configOf, tempDir, writeSkill } from './testing.js';

describe('the skills catalog of a session', () => {
  let snapshots: SessionSkillSnapshots | undefined;
  afterEach(async () => snapshots?.close());

  function setup(config: WardenConfig) {
    const dir = tempDir();
    snapshots = new SessionSkillSnapshots(config, { baseDir: dir, env: {}, homeDir: dir, bundledDir: path.join(dir, 'none'), watch: false });
    return { dir, ws: path.join(dir, 'workspace', 'skills'), snapshots };
  }

  it('renders the snapshot under the configured limits and follows a refresh', () => {
    let config = configOf();
    const { ws, snapshots } = setup(config);
    writeSkill(ws, 'review', 'description: Review a diff');
    writeSkill(ws, 'triage', 'description: Triage an incident');
    const catalog = sessionSkillsCatalog(snapshots, () => config);

    const first = catalog({ agentId: 'main' }, 's1');
    // Workspace skills are shown as untrusted data (test/security/workspace-skill-catalog.test.ts).
    expect(first).toContain('\nname: review\n');
    expect(first).toContain('\nname: triage\n');
    expect(catalog({ agentId: 'main' }, 's1')).toBe(first);

    config = configOf({ skills: { limits: { maxSkillsInPrompt: 1 } } });
    expect(catalog({ agentId: 'main' }, 's1')).toMatch(/^⚠️ Skills truncated: included 1 of 2\./);

    writeSkill(ws, 'review', 'description: Review a diff twice');
    snapshots.invalidate();
    expect(catalog({ agentId: 'main' }, 's1')).toContain('\ndescription: Review a diff twice\n');
  });

  it('is empty for an unknown agent instead of failing the turn', () => {
    const { snapshots } = setup(configOf({ agents: { list: [{ id: 'ops' }] } }));
    expect(sessionSkillsCatalog(snapshots, () => configOf())({ agentId: 'nope' }, 's1')).toBe('');
  });
});
