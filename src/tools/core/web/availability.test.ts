import { describe, expect, it } from 'vitest';
import { wardenConfigSchema, type WardenConfigInput } from '../../../config/schema/index.js';
import { webFetchAvailability, webFetchSettings } from './availability.js';

// webFetchAvailability reads `tools.web.fetch.enabled` with the schema's default instead of
// parsing `{}` through the fetch schema; it must agree with the effective settings every time.
const cases: Array<{ name: string; input: WardenConfigInput; ok: boolean }> = [
  { name: 'no tools block', input: {}, ok: true },
  { name: 'web without fetch', input: { tools: { web: { search: { enabled: false } } } }, ok: true },
  { name: 'fetch without enabled', input: { tools: { web: { fetch: { maxChars: 500 } } } }, ok: true },
  { name: 'fetch enabled', input: { tools: { web: { fetch: { enabled: true } } } }, ok: true },
  { name: 'fetch disabled', input: { tools: { web: { fetch: { enabled: false } } } }, ok: false },
];

describe('webFetchAvailability: offered exactly when the effective settings enable it', () => {
  it.each(cases)('$name', ({ input, ok }) => {
    const config = wardenConfigSchema.parse(input);
    expect(webFetchAvailability(config).ok).toBe(ok);
    expect(webFetchSettings(config).enabled).toBe(ok);
  });
});
