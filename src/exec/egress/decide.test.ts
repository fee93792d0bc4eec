import { describe, expect, it } from 'vitest';
import { execNetworkConfig, networkAllowProblem } from '../../config/schema/exec.js';
import { allowEntryFor, judgeName } from './decide.js';

describe('allow entries: which host:port each covers', () => {
  it.each([
    ['exact name, web port', 'git.test', 80, ['git.test'], 'git.test'],
    ['exact name, https port', 'git.test', 443, ['git.test'], 'git.test'],
    ['exact name, another port needs it named', 'git.test', 22, ['git.test'], undefined],
    ['host:port on its port', 'git.test', 8443, ['git.test:8443'], 'git.test:8443'],
    ['host:port on another port', 'git.test', 443, ['git.test:8443'], undefined],
    ['case and trailing dot are one name', 'GIT.Test.', 443, ['git.test'], 'git.test'],
    ['glob: a subdomain', 'a.b.example.com', 443, ['*.example.com'], '*.example.com'],
    ['glob: not the apex', 'example.com', 443, ['*.example.com'], undefined],
    ['glob: not a look-alike suffix', 'evilexample.com', 443, ['*.example.com'], undefined],
    ['exact: not a subdomain', 'x.git.test', 443, ['git.test'], undefined],
    ['an IP literal entry covers that address only', '93.184.216.34', 443, ['93.184.216.34'], '93.184.216.34'],
    ['an IPv6 literal with a port', '2001:db8::1', 8443, ['[2001:db8::1]:8443'], '[2001:db8::1]:8443'],
    ['bare * matches nothing', 'git.test', 443, ['*'], undefined],
  ])('%s', (_what, host, port, allow, expected) => {
    expect(allowEntryFor(host, port, allow)).toBe(expected);
  });
});

describe('the name verdict, before any DNS answer', () => {
  const granted = new Set(['granted.test:443']);
  it.each([
    ['mode none refuses everything', { mode: 'none', allow: ['git.test'], ask: 'on-miss' }, 'git.test', 'refuse'],
    ['listed', { mode: 'allowlist', allow: ['git.test'], ask: 'off' }, 'git.test', 'listed'],
    ['granted on a card for this command', { mode: 'allowlist', allow: [], ask: 'on-miss' }, 'granted.test', 'granted'],
    ['a miss with ask off is refused', { mode: 'allowlist', allow: [], ask: 'off' }, 'other.test', 'refuse'],
    ['a miss with ask on-miss asks', { mode: 'allowlist', allow: [], ask: 'on-miss' }, 'other.test', 'ask'],
    ['mode open passes every name (the address check follows)', { mode: 'open', allow: [], ask: 'off' }, 'other.test', 'open'],
  ] as const)('%s', (_what, network, host, kind) => {
    expect(judgeName(host, 443, network, granted).kind).toBe(kind);
  });
});

describe('tools.exec.sandbox.network in the config', () => {
  it('defaults to none: no network, as before', () => {
    expect(execNetworkConfig.parse({})).toEqual({ mode: 'none', allow: [], ask: 'off', allowCidrs: [], askTimeoutSec: 120 });
  });
  it.each([
    ['a URL', 'https://git.test/', 'a host name, not a URL'],
    ['a bare star', '*', 'a bare * is not an allowlist'],
    ['a star in the middle', 'git.*.test', 'only a leading "*." glob'],
    ['a port out of range', 'git.test:70000', 'the port must be 1-65535'],
    ['a port that is not a number', 'git.test:https', 'the port must be 1-65535'],
  ])('refuses %s with the reason', (_what, entry, reason) => {
    expect(networkAllowProblem(entry)).toContain(reason);
    const parsed = execNetworkConfig.safeParse({ allow: [entry] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.message).join('\n')).toContain(reason);
  });
  it('refuses an allowCidrs entry that is no range, naming its index', () => {
    const parsed = execNetworkConfig.safeParse({ allowCidrs: ['10.0.0.0/8', '10.0.0.1'] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['allowCidrs', 1]);
  });
});
