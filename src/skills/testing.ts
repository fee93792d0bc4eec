// Builders for skill tests: real folders in a temp dir, real configs through the schema.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseConfig, type WardenConfig, type WardenConfigInput } from '../config/index.js';

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
