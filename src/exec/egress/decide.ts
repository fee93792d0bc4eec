import { classifyIpLiteral, matchesHostPattern, normalizeHost } from '../../net/index.js';
import type { ExecNetworkConfig } from '../../config/schema/exec.js';

/**
 * The name half of a sandboxed command's egress decision (pure): before any DNS answer, is
 * `host:port` on `tools.exec.sandbox.network.allow`, granted for this command, to be asked on
 * a card, or refused? The address half is the URL guard's (src/net/check.ts), after this.
 */
export type NameVerdict =
  | { kind: 'listed'; entry: string }
  | { kind: 'granted' }
  | { kind: 'open' }
  | { kind: 'ask' }
  | { kind: 'refuse'; reason: string };

/** An entry without a port covers the web's ports only; another port must be named (`host:8443`). */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

export interface ParsedEntry {
  host: string;
  port?: number | undefined;
}

/** `example.com`, `*.example.com`, `example.com:8443`, `[2001:db8::1]:443`. */
export function parseAllowEntry(entry: string): ParsedEntry {
  const text = entry.trim();
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    const port = text.slice(close + 1).replace(/^:/, '');
    return { host: normalizeHost(text.slice(0, close + 1)), port: port === '' ? undefined : Number(port) };
  }
  const first = text.indexOf(':');
  if (first > 0 && first === text.lastIndexOf(':')) return { host: normalizeHost(text.slice(0, first)), port: Number(text.slice(first + 1)) };
  return { host: normalizeHost(text) };
}

/** The first allow entry covering `host:port`, if any. `host` is the canonical (URL-parsed) name. */
export function allowEntryFor(host: string, port: number, allow: readonly string[]): string | undefined {
  const h = normalizeHost(host);
  return allow.find((entry) => {
    const parsed = parseAllowEntry(entry);
    const portOk = parsed.port === undefined ? DEFAULT_PORTS.includes(port) : parsed.port === port;
    if (!portOk) return false;
    // An IP literal entry matches that address only, never a glob over it.
    if (classifyIpLiteral(parsed.host) !== undefined || parsed.host.includes(':')) return parsed.host === h;
    return matchesHostPattern(h, parsed.host);
  });
}

export const grantKey = (host: string, port: number): string => `${normalizeHost(host)}:${port}`;

export function judgeName(host: string, port: number, network: { mode: ExecNetworkConfig['mode']; allow: readonly string[]; ask: ExecNetworkConfig['ask'] }, granted: ReadonlySet<string>): NameVerdict {
  if (network.mode === 'none') return { kind: 'refuse', reason: 'tools.exec.sandbox.network.mode is none' };
  const entry = allowEntryFor(host, port, network.allow);
  if (entry !== undefined) return { kind: 'listed', entry };
  if (granted.has(grantKey(host, port))) return { kind: 'granted' };
  if (network.mode === 'open') return { kind: 'open' };
  if (network.ask === 'on-miss') return { kind: 'ask' };
  return { kind: 'refuse', reason: `${host}:${port} is not on tools.exec.sandbox.network.allow` };
}
