import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parsePort } from './load.js';

function dirWith(yaml?: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-port-env-'));
  if (yaml !== undefined) writeFileSync(path.join(dir, 'warden.config.yaml'), yaml);
  return dir;
}

describe('WARDEN_PORT and WARDEN_OPS_PORT (what warden start --port and --ops-port set)', () => {
  it.each([
    ['no file, no variables: the defaults', undefined, {}, { web: 3000, ops: 3004 }],
    ['no file: the variables move both listeners', undefined, { WARDEN_PORT: '3100', WARDEN_OPS_PORT: '3104' }, { web: 3100, ops: 3104 }],
    ['a file names ports: the variables win', 'channels:\n  web: { port: 4000 }\nops: { port: 4004 }\n', { WARDEN_PORT: '3100' }, { web: 3100, ops: 4004 }],
    ['an empty variable is no override', 'channels:\n  web: { port: 4000 }\n', { WARDEN_PORT: '' }, { web: 4000, ops: 3004 }],
  ] as const)('%s', (_name, yaml, env, want) => {
    const r = loadConfig({ cwd: dirWith(yaml), env });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect({ web: r.value.config.channels.web.port, ops: r.value.config.ops.port }).toEqual(want);
  });

  it.each([
    ['WARDEN_PORT', 'abc', 'channels.web.port', 'WARDEN_PORT="abc" is not a port: expected a whole number from 0 to 65535'],
    ['WARDEN_PORT', '70000', 'channels.web.port', 'WARDEN_PORT="70000" is not a port: expected a whole number from 0 to 65535'],
    ['WARDEN_OPS_PORT', '-1', 'ops.port', 'WARDEN_OPS_PORT="-1" is not a port: expected a whole number from 0 to 65535'],
  ])('%s=%s is refused with the key it would set', (name, value, key, message) => {
    const r = loadConfig({ cwd: dirWith(), env: { [name]: value } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.problems).toEqual([{ path: key, message }]);
  });

  it.each([
    ['3000', 3000], ['0', 0], [' 65535 ', 65535], ['65536', undefined], ['3e3', undefined], ['0x10', undefined], ['', undefined], ['1.5', undefined],
  ] as const)('parsePort(%j) is %s', (text, want) => {
    expect(parsePort(text)).toBe(want);
  });
});
