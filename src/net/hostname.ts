import { normalizeHost } from './address.js';

const BLOCKED_EXACT = new Set(['localhost', 'localhost.localdomain', 'metadata.google.internal', 'metadata', 'instance-data']);
const BLOCKED_SUFFIXES = ['.localhost', '.local', '.internal'];
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'metadata.azure.internal']);

/** Names that point at this machine or its private network whatever DNS says (reference B2). */
export function isBlockedHostname(host: string): boolean {
  const h = normalizeHost(host);
  return BLOCKED_EXACT.has(h) || BLOCKED_SUFFIXES.some((s) => h.endsWith(s));
}

/** Cloud metadata names: blocked even where private networks are allowed. */
export function isMetadataHostname(host: string): boolean {
  const h = normalizeHost(host);
  return METADATA_NAMES.has(h) || h.endsWith('.metadata.google.internal');
}

/**
 * `hostnameAllowlist` matching: `*.example.com` matches strict subdomains only (not the apex);
 * anything else matches exactly. `*` and `*.` are ignored rather than read as "everything".
 */
export function matchesHostPattern(host: string, pattern: string): boolean {
  const h = normalizeHost(host);
  const p = normalizeHost(pattern);
  if (p === '*' || p === '*.' || p === '') return false;
  if (p.startsWith('*.')) {
    const suffix = p.slice(1);
    return h.endsWith(suffix) && h.length > suffix.length;
  }
  return h === p;
}
