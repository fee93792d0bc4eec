import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { auditOps } from './audit.js';

const configOf = (raw: unknown) => {
  const r = parseConfig(raw);
  if (!r.ok) throw r.error;
  return r.value.config;
};

describe('auditOps', () => {
  it.each<[string, unknown, string[]]>([
    ['the default (loopback)', {}, []],
    ['another loopback address', { ops: { host: '127.0.0.2' } }, []],
    ['switched off', { ops: { enabled: false } }, []],
    ['every address, meant', { ops: { host: '0.0.0.0', exposeBeyondLoopback: true } }, ['ops.bind']],
  ])('%s', (_name, raw, ids) => {
    expect(auditOps(configOf(raw)).map((f) => f.id)).toEqual(ids);
  });

  it('says what an exposed listener gives away and where', () => {
    expect(auditOps(configOf({ ops: { host: '0.0.0.0', port: 9464, exposeBeyondLoopback: true } }))[0]).toMatchObject({ severity: 'warn', message: expect.stringContaining('on 0.0.0.0:9464, beyond this machine, without a token') });
  });
});
