import ipaddr from 'ipaddr.js';

/** Opt-outs for ranges that fake-IP proxies use; everything else private stays blocked. */
export interface AddressPolicy {
  allowRfc2544BenchmarkRange?: boolean;
  allowIpv6UniqueLocalRange?: boolean;
}

/** Why an address is blocked, or undefined when it is an ordinary public unicast address. */
export type AddressVerdict = { blocked: false } | { blocked: true; why: string };

const ALLOWED: AddressVerdict = { blocked: false };
const block = (why: string): AddressVerdict => ({ blocked: true, why });

const IPV4_BLOCKED_RANGES = new Set(['unspecified', 'broadcast', 'multicast', 'linkLocal', 'loopback', 'carrierGradeNat', 'private', 'reserved']);
const IPV6_BLOCKED_RANGES = new Set(['unspecified', 'loopback', 'linkLocal', 'uniqueLocal', 'multicast', 'reserved', 'benchmarking', 'discard', 'orchid2']);

/** Cloud metadata endpoints: blocked even where private networks are allowed. */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '100.100.100.200', 'fd00:ec2::254', '169.254.170.2']);

/** The shape `ipaddr.IPv4.isValidFourPartDecimal` requires besides a valid parse. */
const FOUR_PART_DECIMAL = /^(0|[1-9]\d*)(\.(0|[1-9]\d*)){3}$/;

export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  while (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/**
 * Classifies a host string that may be an IP literal (reference B3). Legacy IPv4 spellings
 * (`0177.0.0.1`, `127.1`, `2130706433`, `0x7f000001`) and anything that looks like an address but
 * does not parse are blocked: a resolver or another parser could read them as a private address.
 * Returns undefined for a plain hostname.
 */
export function classifyIpLiteral(rawHost: string, policy: AddressPolicy = {}): AddressVerdict | undefined {
  const host = normalizeHost(rawHost);
  // ipaddr's own check tries a parse that throws for every hostname (tens of µs); its shape test first.
  if (FOUR_PART_DECIMAL.test(host) && ipaddr.IPv4.isValidFourPartDecimal(host)) return classifyIpv4(ipaddr.IPv4.parse(host), policy);
  if (host.includes(':')) {
    const bare = host.split('%')[0]!;
    if (!ipaddr.IPv6.isValid(bare)) return block('unparseable IPv6 literal');
    return classifyIpv6(ipaddr.IPv6.parse(bare), policy);
  }
  const parts = host.split('.');
  if (parts.length <= 4) {
    const legacyPart = (p: string) => /^[0-9]+$/.test(p) || /^0x[0-9a-f]+$/.test(p);
    if (parts.every((p) => p.length > 0 && legacyPart(p))) return block('non-canonical IPv4 literal');
    if (parts.some((p) => p.length === 0) || parts.every((p) => /^[0-9]+$/.test(p) || p.startsWith('0x'))) {
      return block('malformed IPv4 literal');
    }
  }
  return undefined;
}

export function isMetadataAddress(address: string): boolean {
  const host = normalizeHost(address);
  if (METADATA_ADDRESSES.has(host)) return true;
  if (host.includes(':') && ipaddr.IPv6.isValid(host.split('%')[0]!)) {
    const v6 = ipaddr.IPv6.parse(host.split('%')[0]!);
    if (METADATA_ADDRESSES.has(v6.toNormalizedString().replace(/(^|:)0+(?=[0-9a-f])/g, '$1'))) return true;
    if (v6.toString() === 'fd00:ec2::254') return true;
    const embedded = embeddedIpv4(v6);
    return embedded !== undefined && METADATA_ADDRESSES.has(embedded.toString());
  }
  return false;
}

function classifyIpv4(address: ipaddr.IPv4, policy: AddressPolicy): AddressVerdict {
  if (address.match(ipaddr.IPv4.parseCIDR('198.18.0.0/15'))) {
    return policy.allowRfc2544BenchmarkRange ? ALLOWED : block('IPv4 benchmarking range 198.18.0.0/15');
  }
  const range = address.range();
  return IPV4_BLOCKED_RANGES.has(range) ? block(`IPv4 ${range} address`) : ALLOWED;
}

function classifyIpv6(address: ipaddr.IPv6, policy: AddressPolicy): AddressVerdict {
  const parts = address.parts;
  if (address.toString() === 'fd00:ec2::254') return block('cloud metadata address');
  if (((parts[0] ?? 0) & 0xffc0) === 0xfec0) return block('IPv6 site-local address');
  if (parts[0] === 0x64 && parts[1] === 0xff9b && parts[2] === 1) return block('IPv6 local-use NAT64 range 64:ff9b:1::/48');
  const range = address.range();
  if (range === 'uniqueLocal' && policy.allowIpv6UniqueLocalRange) return ALLOWED;
  if (IPV6_BLOCKED_RANGES.has(range)) return block(`IPv6 ${range} address`);
  const embedded = embeddedIpv4(address);
  if (embedded) {
    const inner = classifyIpv4(embedded, policy);
    return inner.blocked ? block(`${inner.why} embedded in IPv6 (${range})`) : ALLOWED;
  }
  return ALLOWED;
}

/** The IPv4 address carried inside an IPv6 one (mapped, compatible, NAT64, 6to4, Teredo, ISATAP). */
export function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = address.parts as number[];
  const fromHextets = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return fromHextets(p[6]!, p[7]!); // ::ffff:a.b.c.d
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return fromHextets(p[6]!, p[7]!); // ::ffff:0:a.b.c.d
  if (zeros(0, 6) && (p[6] !== 0 || p[7]! > 1)) return fromHextets(p[6]!, p[7]!); // ::a.b.c.d (not :: or ::1)
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return fromHextets(p[6]!, p[7]!); // NAT64
  if (p[0] === 0x2002) return fromHextets(p[1]!, p[2]!); // 6to4
  if (p[0] === 0x2001 && p[1] === 0) return fromHextets(p[6]! ^ 0xffff, p[7]! ^ 0xffff); // Teredo
  if ((p[4]! & 0xfcff) === 0 && p[5] === 0x5efe) return fromHextets(p[6]!, p[7]!); // ISATAP
  return undefined;
}
