import { describe, expect, it } from 'vitest';
import { classifyIpLiteral, isMetadataAddress } from './address.js';

const verdict = (host: string, policy = {}) => {
  const v = classifyIpLiteral(host, policy);
  return v === undefined ? 'hostname' : v.blocked ? 'blocked' : 'allowed';
};

describe('IP literal classification (reference B3)', () => {
  it.each([
    // IPv4 blocked classes
    ['0.0.0.0', 'blocked'], ['255.255.255.255', 'blocked'], ['224.0.0.1', 'blocked'], ['169.254.169.254', 'blocked'],
    ['127.0.0.1', 'blocked'], ['127.255.0.9', 'blocked'], ['100.64.0.1', 'blocked'], ['100.100.100.200', 'blocked'],
    ['10.1.2.3', 'blocked'], ['172.16.0.1', 'blocked'], ['172.31.255.255', 'blocked'], ['192.168.1.1', 'blocked'],
    ['192.0.0.8', 'blocked'], ['192.0.2.1', 'blocked'], ['192.88.99.1', 'blocked'], ['198.18.0.1', 'blocked'],
    ['198.51.100.7', 'blocked'], ['203.0.113.9', 'blocked'], ['240.0.0.1', 'blocked'],
    // public IPv4, including ranges ipaddr.js calls unicast
    ['8.8.8.8', 'allowed'], ['172.32.0.1', 'allowed'], ['192.175.48.1', 'allowed'], ['192.52.193.1', 'allowed'], ['1.1.1.1', 'allowed'],
    // legacy spellings and IPv4-ish strings fail closed
    ['0177.0.0.1', 'blocked'], ['0x7f.0.0.1', 'blocked'], ['127.1', 'blocked'], ['2130706433', 'blocked'], ['0x7f000001', 'blocked'],
    ['017700000001', 'blocked'], ['8.8.2056', 'blocked'], ['08.0.0.1', 'blocked'], ['127..0.1', 'blocked'], ['999.1.1.1', 'blocked'],
    ['0x7g.0.0.1', 'blocked'],
    // IPv6 classes
    ['::', 'blocked'], ['::1', 'blocked'], ['fe80::1', 'blocked'], ['fe80::1%eth0', 'blocked'], ['fc00::1', 'blocked'], ['fd12::1', 'blocked'],
    ['ff02::1', 'blocked'], ['fec0::1', 'blocked'], ['100::1', 'blocked'], ['2001:db8::1', 'blocked'], ['2001:2::1', 'blocked'],
    ['2001:20::1', 'blocked'], ['64:ff9b:1::8.8.8.8', 'blocked'], ['fd00:ec2::254', 'blocked'], ['[::1]', 'blocked'],
    ['2606:4700::1111', 'allowed'], ['2001:4860:4860::8888', 'allowed'], ['2001:3::1', 'allowed'], ['5f00::1', 'allowed'],
    // IPv4 embedded in IPv6
    ['::ffff:127.0.0.1', 'blocked'], ['::ffff:0:127.0.0.1', 'blocked'], ['64:ff9b::169.254.169.254', 'blocked'], ['2002:7f00:0001::', 'blocked'],
    ['2001:0000:0:0:0:0:80ff:fefe', 'blocked'], ['2001:db8:1234::5efe:127.0.0.1', 'blocked'], ['::127.0.0.1', 'blocked'],
    ['64:ff9b::8.8.8.8', 'allowed'], ['2002:0808:0808::', 'allowed'], ['::ffff:8.8.8.8', 'allowed'], ['::8.8.8.8', 'allowed'],
    // unparseable IPv6 fails closed
    ['::::', 'blocked'], ['2001:db8::gggg', 'blocked'],
    // hostnames are not literals
    ['example.com', 'hostname'], ['1password.com', 'hostname'], ['0x.example.com', 'hostname'],
  ])('%s → %s', (host, expected) => {
    expect(verdict(host)).toBe(expected);
  });

  it.each([
    ['198.18.0.1', { allowRfc2544BenchmarkRange: true }, 'allowed'],
    ['::ffff:198.18.0.1', { allowRfc2544BenchmarkRange: true }, 'allowed'],
    ['fd12::1', { allowIpv6UniqueLocalRange: true }, 'allowed'],
    ['fd00:ec2::254', { allowIpv6UniqueLocalRange: true }, 'blocked'],
  ])('%s with opt-out %o → %s', (host, policy, expected) => {
    expect(verdict(host, policy)).toBe(expected);
  });

  it.each(['169.254.169.254', '100.100.100.200', 'fd00:ec2::254', '::ffff:169.254.169.254'])('%s is a metadata address', (a) => {
    expect(isMetadataAddress(a)).toBe(true);
  });
});
