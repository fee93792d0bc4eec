import { describe, expect, it } from 'vitest';
import { parseConfig } from '../index.js';

const problemsOf = (raw: unknown) => {
  const r = parseConfig(raw);
  return r.ok ? [] : r.error.problems;
};

describe('ops config', () => {
  it('is on, on loopback port 3004, in every config (no web chat needed)', () => {
    const r = parseConfig({ channels: { discord: { token: 'd' } } });
    if (!r.ok) throw r.error;
    expect(r.value.config.ops).toEqual({ enabled: true, host: '127.0.0.1', port: 3004, exposeBeyondLoopback: false });
  });

  it.each<[string, unknown]>([
    ['127.0.0.1', { host: '127.0.0.1' }],
    ['another loopback address', { host: '127.0.0.53' }],
    ['::1', { host: '::1' }],
    ['localhost', { host: 'localhost' }],
    ['every address, meant', { host: '0.0.0.0', exposeBeyondLoopback: true }],
    ['a LAN address, meant', { host: '10.0.0.5', port: 9464, exposeBeyondLoopback: true }],
    ['every address while switched off', { enabled: false, host: '0.0.0.0' }],
    ['port 0 (any free port)', { port: 0 }],
  ])('accepts %s', (_name, ops) => {
    expect(problemsOf({ ops })).toEqual([]);
  });

  it.each<[string, unknown, Array<{ path: string; message: RegExp }>]>([
    ['every address without saying so', { host: '0.0.0.0' }, [{ path: 'ops.host', message: /binds 0\.0\.0\.0, beyond loopback: set ops\.exposeBeyondLoopback: true/ }]],
    ['IPv6 every address without saying so', { host: '::' }, [{ path: 'ops.host', message: /binds ::, beyond loopback/ }]],
    ['a LAN address without saying so', { host: '192.168.1.20' }, [{ path: 'ops.host', message: /beyond loopback/ }]],
    ['a host name that may resolve anywhere', { host: 'warden.internal' }, [{ path: 'ops.host', message: /beyond loopback/ }]],
    ['exposure asked for but false', { host: '0.0.0.0', exposeBeyondLoopback: false }, [{ path: 'ops.host', message: /beyond loopback/ }]],
    ['a port out of range', { port: 70000 }, [{ path: 'ops.port', message: /65535/ }]],
    ['a port that is not a number', { port: '3004' }, [{ path: 'ops.port', message: /number/ }]],
    ['an empty host', { host: '' }, [{ path: 'ops.host', message: /.+/ }]],
    ['a misspelt key', { bind: '0.0.0.0' }, [{ path: 'ops.bind', message: /unknown key/ }]],
    ['exposure as a string', { host: '0.0.0.0', exposeBeyondLoopback: 'yes' }, [{ path: 'ops.exposeBeyondLoopback', message: /boolean/ }]],
  ])('refuses %s, naming the key', (_name, ops, expected) => {
    const problems = problemsOf({ ops });
    expect(problems).toHaveLength(expected.length);
    expected.forEach((e, i) => {
      expect(problems[i]!.path).toBe(e.path);
      expect(problems[i]!.message).toMatch(e.message);
    });
  });
});
