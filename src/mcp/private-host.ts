import { classifyIpLiteral, isMetadataAddress, normalizeHost } from '../net/address.js';

/** Whether a URL names a private place by itself: a private, loopback or link-local literal, or `localhost`. */
export function namesPrivateHost(url: string): boolean {
  let host: string;
  try {
    host = normalizeHost(new URL(url).hostname);
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const literal = classifyIpLiteral(host, {});
  return literal !== undefined && literal.blocked && !isMetadataAddress(host);
}
