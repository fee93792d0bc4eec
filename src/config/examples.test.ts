import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './load.js';

const examplesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../config');

describe('the shipped example configs', () => {
  it.each(readdirSync(examplesDir).filter((f) => /\.(ya?ml|json5?)$/.test(f)))('%s is valid', (file) => {
    const result = loadConfig({ cwd: examplesDir, file, env: {} });
    expect(result.ok ? [] : result.error.problems).toEqual([]);
  });
});
