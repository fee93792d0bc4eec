import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../config/index.js';
import { schemaTokens, toolSearchEngaged, toolSearchSettings } from './settings.js';

const settings = (toolSearch: unknown) => {
  const r = parseConfig({ tools: { toolSearch } });
  if (!r.ok) throw r.error;
  return toolSearchSettings(r.value.config)!;
};
const tools = (n: number, descriptionChars = 40) => Array.from({ length: n }, (_, i) => ({ id: `t${i}`, description: 'd'.repeat(descriptionChars), parameters: { type: 'object' } }));

describe('when Tool Search engages', () => {
  it.each<[string, unknown, number, number, boolean]>([
    ['no threshold: always (OpenClaw)', { mode: 'tools' }, 1, 40, true],
    ['nothing to defer: never', { mode: 'tools' }, 0, 40, false],
    ['a number is a tool count: at it, not yet', { threshold: 10 }, 10, 40, false],
    ['a number is a tool count: above it', { threshold: 10 }, 11, 40, true],
    ['schema tokens: under', { threshold: { schemaTokens: 1000 } }, 10, 40, false],
    ['schema tokens: over, whatever the count', { threshold: { schemaTokens: 1000 } }, 10, 2000, true],
    ['either one over', { threshold: { tools: 100, schemaTokens: 1000 } }, 10, 2000, true],
    ['both under', { threshold: { tools: 100, schemaTokens: 100_000 } }, 10, 40, false],
  ])('%s', (_what, raw, n, chars, engaged) => {
    expect(toolSearchEngaged(settings(raw), tools(n, chars))).toBe(engaged);
  });

  it('an empty threshold object is refused', () => {
    expect(parseConfig({ tools: { toolSearch: { threshold: {} } } }).ok).toBe(false);
  });

  it('schema tokens are about a quarter of the definitions\' characters', () => {
    expect(schemaTokens(tools(1, 40))).toBe(Math.ceil((2 + 40 + JSON.stringify({ type: 'object' }).length + 30) / 4));
  });
});
