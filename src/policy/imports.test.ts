import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Policy code decides from definitions (the catalog) and inputs its callers hand it; it never
// reaches into a tool's implementation, so there is no circle policy → tools/core → policy.
describe('src/policy imports', () => {
  const dir = fileURLToPath(new URL('.', import.meta.url));
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

  it.each(files)('%s imports no tool implementation', (file) => {
    const source = readFileSync(new URL(file, import.meta.url), 'utf8');
    const imports = [...source.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+'([^']+)'/gm)].map((m) => m[1]!);
    expect(imports.filter((spec) => /\/tools\/core\/|\/tools\/surface-inputs|\/plugins\//.test(spec))).toEqual([]);
  });
});
