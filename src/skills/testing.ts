// Builders for skill tests: real folders in a temp dir, real configs through the schema.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseConfig, type WardenConfig, type WardenConfigInput } from '../config/index.js';
import type { LoadedSkill } from './types.js';

export function tempDir(prefix = 'warden-skills-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

/** Writes `<root>/<folder>/SKILL.md` and returns its path. */
export function writeSkill(root: string, folder: string, frontmatter: string, body = '# Steps\n\n1. Do the thing.\n'): string {
  const dir = path.join(root, folder);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'SKILL.md');
  writeFileSync(file, `---\n${frontmatter}\n---\n${body}`);
  return file;
}

export function configOf(raw: WardenConfigInput = {}): WardenConfig {
  const result = parseConfig(raw);
  if (!result.ok) throw new Error(result.error.message);
  return result.value.config;
}

/** A loaded skill as discovery would give it, without a file (command and catalog tests). */
export function testSkill(name: string, over: Partial<LoadedSkill> = {}): LoadedSkill {
  return {
    name,
    description: `about ${name}`,
    userInvocable: true,
    disableModelInvocation: false,
    metadata: { always: false, os: [], requires: { bins: [], anyBins: [], env: [], config: [] } },
    location: `/s/${name}/SKILL.md`,
    baseDir: `/s/${name}`,
    root: { source: 'workspace', dir: '/s' },
    contentHash: '0',
    agentWritable: false,
    ...over,
  };
}
