// The layer check (scripts/check-layers.mjs over .dependency-cruiser.cjs) against small trees
// with one planted fault each, and against this repository itself.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkLayers } from '../../scripts/check-layers.mjs';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/layers/${name}/`, import.meta.url));
const repository = fileURLToPath(new URL('../../', import.meta.url));

describe('the layer check', () => {
  it('passes a tree whose imports point down (policy → config → util)', () => {
    const { ok, output } = checkLayers(fixture('clean'));
    expect(output).toContain('no dependency violations found');
    expect(ok).toBe(true);
  });

  it.each([
    ['upward', 'a runtime import from util up to config', 'util-imports-upward: src/util/pad.ts → src/config/name.ts'],
    ['type-upward', 'a type-only import from util up to config', 'util-imports-upward: src/util/pad.ts → src/config/name.ts'],
    ['cycle', 'two folders of one layer importing each other', 'folder-cycle: src/exec'],
    ['unplaced', 'a folder that no layer names', 'outside-the-layers: src/elsewhere/thing.ts'],
  ])('fails on %s: %s', (name, _why, reported) => {
    const { ok, output } = checkLayers(fixture(name));
    expect(output).toContain(reported);
    expect(ok).toBe(false);
  });

  it('passes on this repository', () => {
    const { ok, output } = checkLayers(repository);
    expect(output).toContain('no dependency violations found');
    expect(ok).toBe(true);
  });
});
