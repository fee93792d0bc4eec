import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WardenConfigInput } from '../config/index.js';
import { binLookup, configPathTruthy, evaluateEligibility, type EligibilityContext } from './eligibility.js';
import { configOf, tempDir } from './testing.js';
import type { LoadedSkill, SkillMetadata, SkillSource } from './types.js';

type MetadataInput = Partial<Omit<SkillMetadata, 'requires'>> & { requires?: Partial<SkillMetadata['requires']> };

function skill(name: string, meta: MetadataInput = {}, source: SkillSource = 'workspace'): Pick<LoadedSkill, 'name' | 'metadata' | 'root'> {
  return {
    name,
    root: { source, dir: `/skills/${source}` },
    metadata: {
      always: meta.always ?? false,
      os: meta.os ?? [],
      ...(meta.skillKey ? { skillKey: meta.skillKey } : {}),
      ...(meta.primaryEnv ? { primaryEnv: meta.primaryEnv } : {}),
      requires: { bins: [], anyBins: [], env: [], config: [], ...meta.requires },
    },
  };
}

function ctx(over: { config?: WardenConfigInput; env?: NodeJS.ProcessEnv; platform?: string; bins?: string[] } = {}): EligibilityContext {
  const bins = new Set(over.bins ?? ['git']);
  return { config: configOf(over.config), env: over.env ?? {}, platform: over.platform ?? 'linux', hasBin: (b) => bins.has(b) };
}

describe('skill eligibility', () => {
  it.each<[string, ReturnType<typeof skill>, ReturnType<typeof ctx>, RegExp | true]>([
    ['no requirements', skill('plain'), ctx(), true],
    ['disabled in skills.entries', skill('plain'), ctx({ config: { skills: { entries: { plain: { enabled: false } } } } }), /disabled by skills\.entries\.plain\.enabled: false/],
    ['disabled under its skillKey', skill('gh', { skillKey: 'github' }), ctx({ config: { skills: { entries: { github: { enabled: false } } } } }), /skills\.entries\.github\.enabled/],
    ['enabled: true changes nothing', skill('plain'), ctx({ config: { skills: { entries: { plain: { enabled: true } } } } }), true],
    ['bundled and allowBundled absent', skill('review', {}, 'bundled'), ctx(), true],
    ['bundled and listed in allowBundled', skill('review', {}, 'bundled'), ctx({ config: { skills: { allowBundled: ['review'] } } }), true],
    ['bundled and not listed', skill('review', {}, 'bundled'), ctx({ config: { skills: { allowBundled: ['triage'] } } }), /not listed in skills\.allowBundled/],
    ['bundled and allowBundled empty', skill('review', {}, 'bundled'), ctx({ config: { skills: { allowBundled: [] } } }), /not listed in skills\.allowBundled/],
    ['allowBundled does not gate workspace skills', skill('review'), ctx({ config: { skills: { allowBundled: [] } } }), true],
    ['os matches', skill('mac', { os: ['darwin', 'linux'] }), ctx(), true],
    ['os does not match', skill('mac', { os: ['darwin'] }), ctx(), /runs only on darwin; this host is linux/],
    ['os alias macos', skill('mac', { os: ['macOS'] }), ctx({ platform: 'darwin' }), true],
    ['always bypasses requirements', skill('a', { always: true, requires: { bins: ['nope'], env: ['NOPE'] } }), ctx(), true],
    ['always does not bypass the os check', skill('a', { always: true, os: ['win32'] }), ctx(), /runs only on win32/],
    ['always does not bypass enabled: false', skill('a', { always: true }), ctx({ config: { skills: { entries: { a: { enabled: false } } } } }), /disabled/],
    ['env from the process', skill('e', { requires: { env: ['TOKEN'] } }), ctx({ env: { TOKEN: 'x' } }), true],
    ['env missing', skill('e', { requires: { env: ['TOKEN'] } }), ctx(), /missing environment TOKEN/],
    ['env set but empty', skill('e', { requires: { env: ['TOKEN'] } }), ctx({ env: { TOKEN: ' ' } }), /missing environment TOKEN/],
    ['env from skills.entries.env', skill('e', { requires: { env: ['TOKEN'] } }), ctx({ config: { skills: { entries: { e: { env: { TOKEN: 'x' } } } } } }), true],
    ['apiKey satisfies the primaryEnv', skill('e', { primaryEnv: 'TOKEN', requires: { env: ['TOKEN'] } }), ctx({ config: { skills: { entries: { e: { apiKey: 'k' } } } } }), true],
    ['apiKey does not satisfy another variable', skill('e', { primaryEnv: 'TOKEN', requires: { env: ['OTHER'] } }), ctx({ config: { skills: { entries: { e: { apiKey: 'k' } } } } }), /missing environment OTHER/],
    ['config path truthy', skill('c', { requires: { config: ['tools.exec.security'] } }), ctx({ config: { tools: { exec: { security: 'allowlist' } } } }), true],
    ['config path unset', skill('c', { requires: { config: ['channels.slack.botToken'] } }), ctx(), /config channels\.slack\.botToken not set/],
    ['config path defaulting on in OpenClaw', skill('c', { requires: { config: ['browser.enabled'] } }), ctx(), true],
    ['bin on PATH', skill('b', { requires: { bins: ['git'] } }), ctx(), true],
    ['bins missing', skill('b', { requires: { bins: ['git', 'gh', 'jq'] } }), ctx(), /missing on PATH: gh, jq/],
    ['one of anyBins present', skill('b', { requires: { anyBins: ['rg', 'git'] } }), ctx(), true],
    ['none of anyBins present', skill('b', { requires: { anyBins: ['rg', 'ag'] } }), ctx(), /needs one of rg, ag on PATH/],
  ])('%s', (_label, s, c, expected) => {
    const verdict = evaluateEligibility(s, c);
    if (expected === true) expect(verdict).toEqual({ eligible: true });
    else {
      expect(verdict.eligible).toBe(false);
      if (!verdict.eligible) expect(verdict.why).toMatch(expected);
    }
  });

  it('names every unmet requirement at once', () => {
    const verdict = evaluateEligibility(skill('all', { requires: { env: ['A'], bins: ['gh'], config: ['channels.discord.token'], anyBins: ['rg'] } }), ctx());
    expect(verdict).toEqual({
      eligible: false,
      why: 'missing environment A (set it, or skills.entries.all.env); config channels.discord.token not set; missing on PATH: gh; needs one of rg on PATH',
    });
  });
});

describe('config paths', () => {
  const config = configOf({ agents: { list: [{ id: 'main', workspace: './w' }] }, tools: { deny: [] } });
  it.each([
    ['agents.list.0.id', true],
    ['agents.list.0.workspace', true],
    ['agents.list.1.id', false],
    ['tools.deny', false],
    ['approvals.exec.timeoutSec', true],
    ['no.such.path', false],
    ['dataDir.length', false],
  ])('%s → %s', (p, expected) => {
    expect(configPathTruthy(config, p)).toBe(expected);
  });
});

describe('PATH lookup', () => {
  it('finds executables in the given PATH only', () => {
    const dir = tempDir();
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'mytool'), '#!/bin/sh\n');
    chmodSync(path.join(bin, 'mytool'), 0o755);
    writeFileSync(path.join(bin, 'notexec'), 'data');
    const has = binLookup({ PATH: bin, HOME: dir });
    expect(has('mytool')).toBe(true);
    expect(has('notexec')).toBe(false);
    expect(has('sh')).toBe(false);
    expect(has(`${bin}/mytool`)).toBe(false);
    expect(binLookup({ PATH: `/nonexistent${path.delimiter}/bin`, HOME: dir })('sh')).toBe(true);
  });
});
