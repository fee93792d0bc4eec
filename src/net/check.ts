import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { classifyIpLiteral, isMetadataAddress, normalizeHost, type AddressPolicy } from './address.js';
import { isBlockedHostname, isMetadataHostname, matchesHostPattern } from './hostname.js';
import { isThisHostName, listenerAddress, ownListenerAt, runningListeners, type OwnListener } from './own-listeners.js';

/**
 * Which surface asks: web_fetch can never reach private networks; the browser can when allowed;
 * `service` is an API endpoint the operator configured (a self-hosted SearXNG, an Ollama host),
 * which may be private when allowed, never the model's choice. `sandbox` is a sandboxed
 * command's connection through the egress proxy: public addresses, and private ones only inside
 * `allowCidrs`.
 */
export type UrlSurface = 'web_fetch' | 'browser' | 'service' | 'sandbox';

export interface UrlPolicy extends AddressPolicy {
  /** Browser only: reach private, loopback and link-local networks (never cloud metadata). */
  allowPrivateNetwork?: boolean;
  /** When non-empty the host must match one entry: exact names or `*.example.com`. */
  hostnameAllowlist?: string[];
  /** Exact names exempt from the private-address check (their answers still may not be metadata). */
  allowedHostnames?: string[];
  /**
   * Warden's own listeners as the config declares them; `urlPolicyFor` fills it (it is no config
   * key). The listeners running in this process are always added: nothing here can remove one.
   */
  ownListeners?: readonly OwnListener[];
  /** Refused before DNS and on every redirect: exact names or `*.example.com` (and its apex). */
  blockedHostnames?: string[];
  /**
   * Sandbox egress only (`tools.exec.sandbox.network.allowCidrs`): addresses inside these ranges
   * pass the private-address check. Metadata addresses and Warden's own listeners are refused
   * before it is read.
   */
  allowCidrs?: string[];
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export interface UrlVerdict {
  allowed: boolean;
  reason: string;
  /** The checked address the connection must be pinned to (first answer), when resolved. */
  address?: string;
  /** Every checked answer, IPv4 first. */
  addresses?: string[];
}

export const systemResolver: Resolver = async (host) => {
  const answers = await lookup(host, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

const deny = (reason: string, extra: Partial<UrlVerdict> = {}): UrlVerdict => ({ allowed: false, reason, ...extra });

/**
 * Decides whether a URL may be fetched or navigated to (reference part B, with Warden's stricter
 * choices: metadata names and addresses stay blocked even where private networks are allowed, and
 * a name that does not resolve is blocked). DNS is resolved once here; the caller must connect to
 * `addresses` only (pinning), and check every redirect hop again.
 */
export async function checkUrlWithPolicy(rawUrl: string, surface: UrlSurface, policy: UrlPolicy = {}, resolve: Resolver = systemResolver): Promise<UrlVerdict> {
  const text = rawUrl.trim();
  if (!text) return deny('empty URL');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return deny('invalid URL');
  }
  if (surface === 'browser' && url.href === 'about:blank') return { allowed: true, reason: 'about:blank' };
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return deny(`scheme ${url.protocol} is not allowed: only http and https`);
  if (url.username || url.password) return deny('URLs with credentials are not allowed');

  const host = normalizeHost(url.hostname);
  if (!host) return deny('invalid hostname');

  // Before any opt-out: Warden's own listeners are never reachable, whatever the policy says.
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const listeners = [...(policy.ownListeners ?? []), ...runningListeners()];
  const ownAt = (address: string) => ownListenerAt(address, port, listeners);
  const refuseOwn = (listener: OwnListener, via: string, address?: string) =>
    deny(
      `${via} is Warden's own ${listener.name} (listening on ${listenerAddress(listener)}); web_fetch and the browser never reach Warden's own listeners, whatever the SSRF policy allows`,
      address ? { address } : {},
    );
  if (isThisHostName(host)) {
    const listener = listeners.find((l) => l.port === port);
    if (listener) return refuseOwn(listener, `${host}:${port}`);
  }
  const ownLiteral = ownAt(host);
  if (ownLiteral) return refuseOwn(ownLiteral, `${url.hostname}:${port}`, host);
  const privateAllowed = (surface === 'browser' || surface === 'service') && policy.allowPrivateNetwork === true;
  const exempt = privateAllowed || (surface === 'browser' && (policy.allowedHostnames ?? []).some((h) => normalizeHost(h) === host));

  if (isMetadataHostname(host) || isMetadataAddress(host)) return deny(`cloud metadata endpoint ${host} is always blocked`);
  const blocked = (policy.blockedHostnames ?? []).find((p) => matchesHostPattern(host, p) || normalizeHost(p) === host);
  if (blocked !== undefined) return deny(`${host} is in blockedHostnames ("${blocked}")`);
  const allowlist = (policy.hostnameAllowlist ?? []).filter((p) => p.trim() !== '*' && p.trim() !== '*.');
  if (allowlist.length > 0 && !allowlist.some((p) => matchesHostPattern(host, p))) return deny(`${host} is not in hostnameAllowlist`);

  const cidrs = surface === 'sandbox' ? parseCidrs(policy.allowCidrs ?? []) : [];
  const literal = classifyIpLiteral(host, policy);
  if (literal !== undefined) {
    if (literal.blocked && cidrs.length > 0 && inCidrs(host, cidrs)) return { allowed: true, reason: `address in allowCidrs`, address: host, addresses: [host] };
    if (literal.blocked && !privateAllowed) return deny(`blocked address ${host}: ${literal.why}`, { address: host });
    return { allowed: true, reason: literal.blocked ? 'private address allowed by browser.ssrfPolicy.allowPrivateNetwork' : 'public address', address: host, addresses: [host] };
  }
  if (!exempt && isBlockedHostname(host)) return deny(`blocked hostname ${host}`);

  let answers: ResolvedAddress[];
  try {
    answers = await resolve(host);
  } catch (err) {
    return deny(`unable to resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (answers.length === 0) return deny(`unable to resolve ${host}: no addresses`);
  const ordered = [...new Map(answers.map((a) => [a.address, a])).values()].sort((a, b) => a.family - b.family);
  for (const answer of ordered) {
    const own = ownAt(answer.address);
    if (own) return refuseOwn(own, `${host}:${port} (resolving to ${answer.address})`, answer.address);
    if (isMetadataAddress(answer.address)) return deny(`${host} resolves to cloud metadata address ${answer.address}`, { address: answer.address });
    if (privateAllowed) continue;
    if (cidrs.length > 0 && inCidrs(answer.address, cidrs)) continue;
    const verdict = classifyIpLiteral(answer.address, policy) ?? { blocked: true as const, why: 'answer is not an IP address' };
    if (verdict.blocked) {
      if (exempt && !/loopback|linkLocal|unspecified/.test(verdict.why)) continue;
      return deny(`${host} resolves to blocked address ${answer.address}: ${verdict.why}`, { address: answer.address });
    }
  }
  const addresses = ordered.map((a) => a.address);
  return { allowed: true, reason: exempt && !privateAllowed ? `${host} is in allowedHostnames` : privateAllowed ? 'private networks allowed' : 'public address', address: addresses[0], addresses };
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Unparseable entries are dropped here: the config schema refuses them with their key path. */
function parseCidrs(list: readonly string[]): Cidr[] {
  const out: Cidr[] = [];
  for (const text of list) {
    try {
      out.push(ipaddr.parseCIDR(text));
    } catch {
      // refused by the schema
    }
  }
  return out;
}

/** Whether a canonical address lies in one of the ranges (IPv4-mapped IPv6 is compared as IPv4). */
function inCidrs(address: string, cidrs: readonly Cidr[]): boolean {
  const text = normalizeHost(address).split('%')[0]!;
  // Canonical spellings only: a legacy form (`2130706433`, `0x7f.1`) is refused, never matched.
  const canonical = text.includes(':') ? ipaddr.IPv6.isValid(text) : ipaddr.IPv4.isValidFourPartDecimal(text);
  if (!canonical) return false;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(text);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return cidrs.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match([range, bits] as never));
}
