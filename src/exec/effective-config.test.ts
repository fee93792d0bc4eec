import { describe, expect, it } from 'vitest';
import { wardenConfigSchema, type WardenConfigInput } from '../config/schema/index.js';
import { effectiveExecConfig, execHostOf } from './effective-config.js';
import { resolveExecHost } from './sandbox.js';

// execHostOf reads `tools.exec.host` where it is instead of parsing `{}` through the exec schema;
// for every shape of config it must answer what the effective block's host does.
const cases: Array<{ name: string; input: WardenConfigInput }> = [
  { name: 'no tools block', input: {} },
  { name: 'tools without exec', input: { tools: { deny: ['browser'] } } },
  { name: 'exec without host', input: { tools: { exec: { security: 'full' } } } },
  { name: 'host sandbox', input: { tools: { exec: { host: 'sandbox' } } } },
  { name: 'host gateway', input: { tools: { exec: { host: 'gateway' } } } },
  { name: 'an agent with its own exec block (host is process-wide)', input: { tools: { exec: { host: 'gateway' } }, agents: { list: [{ id: 'a', tools: { exec: { security: 'deny' } } }] } } },
];

describe('execHostOf: the host the effective exec block names', () => {
  it.each(cases)('$name', ({ input }) => {
    const config = wardenConfigSchema.parse(input);
    expect(execHostOf(config)).toBe(resolveExecHost(effectiveExecConfig(config).host));
    expect(config.tools.exec?.host).toBe(effectiveExecConfig(config).host);
  });
});
