import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WardenConfigInput } from '../config/index.js';
import { SessionSkillSnapshots, takeSkillSnapshot, type SnapshotOptions } from './snapshot.js';
import { configOf, tempDir, writeSkill } from './testing.js';

function setup() {
  const dir = tempDir();
  const bundled = path.join(dir, 'bundled');
  mkdirSync(bundled);
  const options: SnapshotOptions = { baseDir: dir, env: { PATH: '' }, homeDir: path.join(dir, 'home'), bundledDir: bundled, hasBin: () => false };
  return { dir, bundled, ws: path.join(dir, 'workspace', 'skills'), options };
}

function take(config: WardenConfigInput, options: SnapshotOptions) {
  const result = takeSkillSnapshot(configOf(config), undefined, options);
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

describe('taking a skill snapshot', () => {
  it('splits skills into eligible and ineligible with why', () => {
    const { ws, options } = setup();
    writeSkill(ws, 'review', 'description: Review a diff');
    writeSkill(ws, 'gh', 'description: GitHub\nmetadata: {"openclaw":{"requires":{"bins":["gh"]}}}');
    const snap = take({}, options);
    expect(snap.eligible.map((s) => s.name)).toEqual(['review']);
    expect(snap.ineligible.map((s) => [s.name, s.why])).toEqual([['gh', 'missing on PATH: gh']]);
    expect(snap.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives the same fingerprint for the same files and config', () => {
    const { ws, options } = setup();
    writeSkill(ws, 'review', 'description: Review a diff');
    expect(take({}, options).fingerprint).toBe(take({}, options).fingerprint);
  });

  it.each<[string, (s: ReturnType<typeof setup>) => { config?: WardenConfigInput; options?: Partial<SnapshotOptions> }]>([
    ['a SKILL.md changes', (s) => (writeSkill(s.ws, 'review', 'description: Review a diff, carefully'), {})],
    ['a skill folder is added', (s) => (writeSkill(s.ws, 'new', 'description: new'), {})],
    ['a skill is disabled in config', () => ({ config: { skills: { entries: { review: { enabled: false } } } } })],
    ['an environment variable makes a skill eligible', () => ({ options: { env: { PATH: '', TOKEN: 'x' } } })],
    ['a required binary appears', () => ({ options: { hasBin: (b: string) => b === 'gh' } })],
    ['the prompt limits change', () => ({ config: { skills: { limits: { maxSkillsInPrompt: 5 } } } })],
  ])('changes the fingerprint when %s', (_label, change) => {
    const s = setup();
    writeSkill(s.ws, 'review', 'description: Review a diff');
    writeSkill(s.ws, 'needs', 'description: n\nmetadata: {"openclaw":{"requires":{"env":["TOKEN"],"bins":["gh"]}}}');
    writeSkill(s.ws, 'gh', 'description: g\nmetadata: {"openclaw":{"requires":{"bins":["gh"]}}}');
    const before = take({}, s.options).fingerprint;
    const { config = {}, options = {} } = change(s);
    expect(take(config, { ...s.options, ...options }).fingerprint).not.toBe(before);
  });

  it('keeps secret values out of the fingerprint: changing an apiKey value changes nothing', () => {
    const { ws, options } = setup();
    writeSkill(ws, 'review', 'description: Review a diff');
    const a = take({ skills: { entries: { review: { apiKey: 'secret-one' } } } }, options);
    const b = take({ skills: { entries: { review: { apiKey: 'secret-two' } } } }, options);
    expect(a.fingerprint).toBe(b.fingerprint);
  });

  it('reports an unknown agent as an error value', () => {
    const { options } = setup();
    expect(takeSkillSnapshot(configOf({ agents: { list: [{ id: 'ops' }] } }), 'dev', options)).toEqual({
      ok: false,
      error: 'unknown agent "dev"; known agents: ops',
    });
  });
});

describe('per-session snapshots', () => {
  const open: SessionSkillSnapshots[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  function snapshots(config: WardenConfigInput, options: SnapshotOptions, watch = true) {
    const s = new SessionSkillSnapshots(configOf(config), { ...options, watch });
    open.push(s);
    return s;
  }

  function get(s: SessionSkillSnapshots, session: string) {
    const result = s.forSession(session, undefined);
    if (!result.ok) throw new Error(result.error);
    return result.value;
  }

  it('keeps a session on its snapshot while nothing changes', () => {
    const { ws, options } = setup();
    writeSkill(ws, 'review', 'description: Review a diff');
    const s = snapshots({}, options, false);
    const first = get(s, 'agent:main:web:direct:u1');
    expect(get(s, 'agent:main:web:direct:u1')).toBe(first);
    // Another session of the same agent shares it.
    expect(get(s, 'agent:main:web:direct:u2')).toBe(first);
  });

  it('refreshes after a SKILL.md changes on disk', async () => {
    const { ws, options } = setup();
    const file = writeSkill(ws, 'review', 'description: Review a diff');
    const s = snapshots({}, options);
    const first = get(s, 'session-a');
    await s.ready();
    const changed = new Promise<number>((resolve) => s.onChange(resolve));

    writeFileSync(file, '---\ndescription: Review a diff, line by line\n---\n');
    expect(await changed).toBe(1);
    const second = get(s, 'session-a');
    expect(second).not.toBe(first);
    expect(second.fingerprint).not.toBe(first.fingerprint);
    expect(second.eligible[0]!.description).toBe('Review a diff, line by line');
  });

  it('notices a skills root that is created after start', async () => {
    const { dir, options } = setup();
    const s = snapshots({}, options);
    expect(get(s, 'session-a').eligible).toEqual([]);
    await s.ready();
    const changed = vi.fn();
    s.onChange(changed);

    writeSkill(path.join(dir, 'workspace', '.agents', 'skills'), 'late', 'description: arrived later');
    await vi.waitFor(() => expect(get(s, 'session-a').eligible.map((x) => x.name)).toEqual(['late']), { timeout: 10_000, interval: 100 });
    expect(changed).toHaveBeenCalled();

    // Once the root exists, edits inside it are seen too.
    writeSkill(path.join(dir, 'workspace', '.agents', 'skills'), 'later', 'description: and another');
    await vi.waitFor(() => expect(get(s, 'session-a').eligible.map((x) => x.name)).toEqual(['late', 'later']), { timeout: 10_000, interval: 100 });
  });

  it('debounces a burst of changes into one refresh', async () => {
    const { ws, options } = setup();
    writeSkill(ws, 'review', 'description: v0');
    const s = snapshots({}, options);
    get(s, 'session-a');
    await s.ready();
    const changed = vi.fn();
    s.onChange(changed);
    for (let i = 1; i <= 5; i++) writeSkill(ws, 'review', `description: v${i}`);
    await vi.waitFor(() => expect(changed).toHaveBeenCalled(), { timeout: 10_000, interval: 50 });
    await new Promise((r) => setTimeout(r, 600));
    expect(changed).toHaveBeenCalledTimes(1);
    expect(get(s, 'session-a').eligible[0]!.description).toBe('v5');
  });

  it('does not move a session when a rescan finds the same skills', () => {
    const { ws, options } = setup();
    writeSkill(ws, 'review', 'description: Review a diff');
    const s = snapshots({}, options, false);
    const first = get(s, 'session-a');
    s.invalidate();
    expect(get(s, 'session-a')).toBe(first);
  });

  it('takes a new snapshot after a config reload', () => {
    const { ws, options } = setup();
    writeSkill(ws, 'review', 'description: Review a diff');
    const s = snapshots({}, options, false);
    expect(get(s, 'session-a').eligible).toHaveLength(1);
    s.setConfig(configOf({ skills: { entries: { review: { enabled: false } } } }));
    expect(get(s, 'session-a').ineligible.map((x) => x.why)).toEqual(['disabled by skills.entries.review.enabled: false']);
  });

  it('stops reporting changes once closed', async () => {
    const { ws, options } = setup();
    const file = writeSkill(ws, 'review', 'description: v0');
    const s = snapshots({}, options);
    get(s, 'session-a');
    await s.ready();
    const changed = vi.fn();
    s.onChange(changed);
    await s.close();
    writeFileSync(file, '---\ndescription: v1\n---\n');
    rmSync(path.join(ws, 'review'), { recursive: true });
    await new Promise((r) => setTimeout(r, 600));
    expect(changed).not.toHaveBeenCalled();
  });
});
