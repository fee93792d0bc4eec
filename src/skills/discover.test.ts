import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareNames, discoverSkills } from './discover.js';
import { resolveSkillRoots } from './roots.js';
import { configOf, tempDir, writeSkill } from './testing.js';
import { DEFAULT_DISCOVERY_LIMITS, type SkillRoot } from './types.js';

describe('skill roots of an agent', () => {
  const base = '/srv/warden';
  const opts = { baseDir: base, env: {}, homeDir: '/home/op', bundledDir: '/pkg/skills' };

  it('orders roots lowest to highest precedence', () => {
    const config = configOf({ skills: { extraDirs: ['shared/skills', '~/more'] }, dataDir: './state' });
    const result = resolveSkillRoots(config, undefined, { ...opts, pluginSkillDirs: ['/plugins/p/skills'] });
    expect(result.ok && result.value).toEqual({
      agentId: 'main',
      workspace: '/srv/warden/workspace',
      roots: [
        { source: 'extra', dir: '/srv/warden/shared/skills' },
        { source: 'extra', dir: '/home/op/more' },
        { source: 'extra', dir: '/plugins/p/skills' },
        { source: 'bundled', dir: '/pkg/skills' },
        { source: 'managed', dir: '/srv/warden/state/skills' },
        { source: 'personal', dir: '/home/op/.agents/skills' },
        { source: 'workspace', dir: '/srv/warden/workspace/.agents/skills' },
        { source: 'workspace', dir: '/srv/warden/workspace/skills' },
      ],
      writableDirs: ['/srv/warden/workspace'],
    });
  });

  it.each([
    ['the default agent', undefined, 'ops', '/srv/warden/ops-ws'],
    ['a listed agent with its own workspace', 'ops', 'ops', '/srv/warden/ops-ws'],
    ['a listed agent without one uses agents.defaults.workspace', 'dev', 'dev', '/srv/warden/shared-ws'],
  ])('workspace of %s', (_label, agentId, id, workspace) => {
    const config = configOf({
      agents: { defaults: { workspace: './shared-ws' }, list: [{ id: 'ops', default: true, workspace: 'ops-ws' }, { id: 'dev' }] },
    });
    const result = resolveSkillRoots(config, agentId, opts);
    expect(result.ok && [result.value.agentId, result.value.workspace]).toEqual([id, workspace]);
  });

  it('takes the managed root from WARDEN_DATA_DIR when set', () => {
    const result = resolveSkillRoots(configOf(), undefined, { ...opts, env: { WARDEN_DATA_DIR: '/var/lib/warden' } });
    expect(result.ok && result.value.roots.find((r) => r.source === 'managed')?.dir).toBe('/var/lib/warden/skills');
  });

  it('rejects an unknown agent id', () => {
    const result = resolveSkillRoots(configOf({ agents: { list: [{ id: 'ops' }] } }), 'nope', opts);
    expect(result).toEqual({ ok: false, error: 'unknown agent "nope"; known agents: ops' });
  });

  it('accepts the implicit main agent when agents.list is empty', () => {
    expect(resolveSkillRoots(configOf(), 'main', opts).ok).toBe(true);
  });
});

describe('discovering skills', () => {
  function tiers() {
    const dir = tempDir();
    const roots: SkillRoot[] = [
      { source: 'extra', dir: path.join(dir, 'extra') },
      { source: 'bundled', dir: path.join(dir, 'bundled') },
      { source: 'managed', dir: path.join(dir, 'managed') },
      { source: 'personal', dir: path.join(dir, 'personal') },
      { source: 'workspace', dir: path.join(dir, 'ws', '.agents', 'skills') },
      { source: 'workspace', dir: path.join(dir, 'ws', 'skills') },
    ];
    return { dir, roots };
  }

  it('lets a higher trusted root override a same-named skill and reports the hidden copy; a workspace copy is refused', () => {
    const { roots } = tiers();
    const [extra, bundled, managed, personal, agents, ws] = roots.map((r) => r.dir) as [string, string, string, string, string, string];
    writeSkill(extra, 'review', 'name: review\ndescription: from extra');
    writeSkill(bundled, 'review', 'name: review\ndescription: from bundled');
    writeSkill(managed, 'review', 'name: review\ndescription: from managed');
    const winner = writeSkill(personal, 'review', 'name: review\ndescription: from personal');
    const fromAgents = writeSkill(agents, 'review', 'name: review\ndescription: from .agents');
    const fromWs = writeSkill(ws, 'review-v2', 'name: review\ndescription: from workspace skills');
    writeSkill(bundled, 'triage', 'description: only bundled');
    writeSkill(ws, 'notes', 'description: workspace only');
    writeSkill(agents, 'notes', 'description: workspace only, lower');

    const found = discoverSkills(roots);
    expect(found.errors).toEqual([]);
    expect(found.skills.map((s) => [s.name, s.description, s.root.source, s.agentWritable])).toEqual([
      ['notes', 'workspace only', 'workspace', true],
      ['review', 'from personal', 'personal', false],
      ['triage', 'only bundled', 'bundled', false],
    ]);
    expect(found.skills[1]!.location).toBe(winner);
    expect(found.overridden.map((o) => [o.name, o.root, o.overriddenBy.root])).toEqual([
      ['review', 'extra', 'bundled'],
      ['review', 'bundled', 'managed'],
      ['review', 'managed', 'personal'],
      // Between workspace skills, precedence is as in OpenClaw.
      ['notes', 'workspace', 'workspace'],
    ]);
    expect(found.refused.map((r) => [r.location, r.shadows?.location])).toEqual([
      [fromAgents, winner],
      [fromWs, winner],
    ]);
    expect(found.refused[0]!.why).toMatch(/^refused: from a folder an agent can write, it would shadow the personal skill "review"/);
  });

  it('reports malformed SKILL.md files and keeps loading the rest', () => {
    const { roots } = tiers();
    const ws = roots[5]!.dir;
    writeSkill(ws, 'good', 'description: fine');
    const noDescription = writeSkill(ws, 'bad', 'name: bad');
    const badYaml = writeSkill(ws, 'broken', 'name: [oops\ndescription: x');
    mkdirSync(path.join(ws, 'nofm'));
    writeFileSync(path.join(ws, 'nofm', 'SKILL.md'), 'no frontmatter here');

    const found = discoverSkills(roots);
    expect(found.skills.map((s) => s.name)).toEqual(['good']);
    expect(found.errors).toEqual([
      { file: noDescription, error: 'description is required' },
      { file: badYaml, error: expect.stringMatching(/^invalid frontmatter/) },
      { file: path.join(ws, 'nofm', 'SKILL.md'), error: expect.stringMatching(/missing YAML frontmatter/) },
    ]);
  });

  it('treats a root holding SKILL.md as one skill, and finds grouped skills one level down', () => {
    const dir = tempDir();
    writeSkill(dir, 'single', 'description: the root itself');
    writeSkill(path.join(dir, 'grouped'), 'ops/incident', 'description: grouped');
    writeSkill(path.join(dir, 'grouped'), '.hidden', 'description: hidden');
    writeSkill(path.join(dir, 'grouped'), 'node_modules/x', 'description: dependency');
    const found = discoverSkills([
      { source: 'extra', dir: path.join(dir, 'single') },
      { source: 'extra', dir: path.join(dir, 'grouped') },
    ]);
    expect(found.skills.map((s) => s.name)).toEqual(['incident', 'single']);
  });

  it('refuses a workspace skill folder that links outside its root', () => {
    const dir = tempDir();
    writeSkill(path.join(dir, 'elsewhere'), 'secret', 'description: outside');
    const ws = path.join(dir, 'ws', 'skills');
    mkdirSync(ws, { recursive: true });
    symlinkSync(path.join(dir, 'elsewhere', 'secret'), path.join(ws, 'linked'));
    const found = discoverSkills([{ source: 'workspace', dir: ws }]);
    expect(found.skills).toEqual([]);
    expect(found.errors[0]).toEqual({ file: path.join(ws, 'linked', 'SKILL.md'), error: expect.stringMatching(/resolves outside its root/) });

    // A managed root belongs to the operator: links are followed.
    expect(discoverSkills([{ source: 'managed', dir: ws }]).skills.map((s) => s.name)).toEqual(['linked']);
  });

  it('refuses a SKILL.md that links outside its folder', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'outside.md'), '---\ndescription: x\n---\n');
    mkdirSync(path.join(dir, 'root', 's'), { recursive: true });
    symlinkSync(path.join(dir, 'outside.md'), path.join(dir, 'root', 's', 'SKILL.md'));
    const found = discoverSkills([{ source: 'managed', dir: path.join(dir, 'root') }]);
    expect(found.skills).toEqual([]);
    expect(found.errors[0]!.error).toMatch(/resolves outside its skill folder/);
  });

  describe('limits', () => {
    it('skips a SKILL.md over maxSkillFileBytes and says so', () => {
      const dir = tempDir();
      const big = writeSkill(dir, 'big', 'description: big', 'x'.repeat(2000));
      writeSkill(dir, 'small', 'description: small');
      const found = discoverSkills([{ source: 'extra', dir }], { ...DEFAULT_DISCOVERY_LIMITS, maxSkillFileBytes: 1000 });
      expect(found.skills.map((s) => s.name)).toEqual(['small']);
      expect(found.errors).toEqual([{ file: big, error: expect.stringMatching(/^SKILL\.md is \d+ bytes, over the 1000-byte limit$/) }]);
    });

    it('examines at most maxCandidatesPerRoot folders and says the rest were not scanned', () => {
      const dir = tempDir();
      for (let i = 0; i < 5; i++) writeSkill(dir, `s${i}`, 'description: d');
      const found = discoverSkills([{ source: 'extra', dir }], { ...DEFAULT_DISCOVERY_LIMITS, maxCandidatesPerRoot: 3 });
      expect(found.skills.map((s) => s.name)).toEqual(['s0', 's1', 's2']);
      expect(found.errors).toEqual([{ file: dir, error: 'more than 3 folders under this root; the rest were not scanned' }]);
    });

    it('loads at most maxSkillsLoadedPerSource per source, across its roots', () => {
      const dir = tempDir();
      const a = path.join(dir, 'a');
      const b = path.join(dir, 'b');
      for (let i = 0; i < 2; i++) writeSkill(a, `a${i}`, 'description: d');
      for (let i = 0; i < 3; i++) writeSkill(b, `b${i}`, 'description: d');
      writeSkill(path.join(dir, 'c'), 'c0', 'description: d');
      const found = discoverSkills(
        [
          { source: 'workspace', dir: a },
          { source: 'workspace', dir: b },
          { source: 'extra', dir: path.join(dir, 'c') },
        ],
        { ...DEFAULT_DISCOVERY_LIMITS, maxSkillsLoadedPerSource: 3 },
      );
      expect(found.skills.map((s) => s.name)).toEqual(['a0', 'a1', 'b0', 'c0']);
      expect(found.errors).toEqual([{ file: b, error: '2 skill folders not loaded: the workspace source is limited to 3 skills' }]);
    });
  });

  it('ignores roots that do not exist and reports a root that is a file', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'file'), 'x');
    const found = discoverSkills([
      { source: 'extra', dir: path.join(dir, 'missing') },
      { source: 'extra', dir: path.join(dir, 'file') },
    ]);
    expect(found).toEqual({ skills: [], overridden: [], refused: [], errors: [{ file: path.join(dir, 'file'), error: 'skill root is not a directory' }] });
  });
});

describe('the order of skill and folder names', () => {
  const sign = (n: number) => Math.sign(n);
  // Each pair in both orders: the direct comparison of plain names gives English collation's answer.
  it.each([
    ['code-review', 'incident-triage'],
    ['release-notes', 'release'],
    ['a-b', 'ab'],
    ['a-b', 'a0'],
    ['a9', 'a10'],
    ['0day', 'alpha'],
    ['-x', 'x'],
    ['same', 'same'],
    ['', 'a'],
    // Outside the plain set: English collation itself (case, underscores, dots, accents).
    ['Beta', 'alpha'],
    ['a_b', 'a-b'],
    ['b.md', 'b-md'],
    ['éclair', 'eclair'],
    ['Zeta', 'zeta'],
  ])('%s and %s', (a, b) => {
    expect(sign(compareNames(a, b))).toBe(sign(a.localeCompare(b, 'en')));
    expect(sign(compareNames(b, a))).toBe(sign(b.localeCompare(a, 'en')));
  });

  it('agrees with English collation over many random plain names', () => {
    const chars = 'abz09-';
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const name = () => Array.from({ length: 1 + Math.floor(next() * 6) }, () => chars[Math.floor(next() * chars.length)]).join('');
    for (let i = 0; i < 5000; i++) {
      const a = name();
      const b = name();
      expect([a, b, sign(compareNames(a, b))]).toEqual([a, b, sign(a.localeCompare(b, 'en'))]);
    }
  });
});
