import { hostname, networkInterfaces } from 'node:os';
import type { Server } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { WardenConfig } from '../config/index.js';
import { plannedAdapters } from '../config/planned-adapters.js';
import { embeddedIpv4, normalizeHost } from './address.js';

/**
 * Warden's own listening sockets: the web chat, the Slack HTTP receiver, the browser's guard
 * proxy, the ops listener, and any HTTP API added later. web_fetch and the browser must never reach one of them,
 * whatever the SSRF policy allows: a page that can load the web chat can click "Allow once"
 * on its own exec.
 *
 * A listener is matched by port on any address of this machine — loopback (all of
 * 127.0.0.0/8 and ::1), the unspecified addresses (0.0.0.0 and :: connect to this host), every
 * interface address (IPv4, IPv6 with or without a zone, link-local included) and those
 * addresses carried inside IPv6 (mapped, compatible, NAT64, 6to4, Teredo, ISATAP) — whatever
 * address the listener is bound to. That refuses somewhat more than the kernel would deliver
 * (a bind on 127.0.0.1 is not reachable through the LAN address), which is the safe side.
 */
export interface OwnListener {
  /** What it is, as refusals name it: "web chat", "Slack HTTP receiver", "browser guard proxy". */
  name: string;
  /** The bind address: a literal, `localhost`, or a wildcard (`0.0.0.0`, `::`). */
  host: string;
  port: number;
}

const registered = new Set<OwnListener>();
const sources = new Set<() => readonly OwnListener[]>();

/** Records a listening socket of this process until the returned function is called. */
export function registerOwnListener(listener: OwnListener): () => void {
  const entry = { ...listener };
  registered.add(entry);
  return () => void registered.delete(entry);
}

/** Records listeners that are read at each check (an adapter whose address is known once it has started). */
export function registerOwnListenerSource(source: () => readonly OwnListener[]): () => void {
  sources.add(source);
  return () => void sources.delete(source);
}

/** Keeps `server` registered from each 'listening' until 'close', under its actual address and port. */
export function registerServer(server: Server, name: string): void {
  let off: (() => void) | undefined;
  const on = () => {
    off?.();
    const address = server.address();
    if (address && typeof address === 'object') off = registerOwnListener({ name, host: address.address, port: address.port });
  };
  if (server.listening) on();
  server.on('listening', on);
  server.on('close', () => {
    off?.();
    off = undefined;
  });
}

/** The listeners running in this process. */
export function runningListeners(): OwnListener[] {
  const out = [...registered];
  for (const source of sources) {
    try {
      out.push(...source());
    } catch {
      // A source that cannot say (an adapter mid-restart) adds nothing; the configured ones still hold.
    }
  }
  return out;
}

/**
 * The listeners a config opens, so a process that is not the bot (`warden url-check`,
 * `warden invoke`) refuses the running bot's listeners too. A port of 0 is known only once bound.
 */
export function configuredListeners(config: WardenConfig): OwnListener[] {
  const planned = plannedAdapters(config);
  const out: OwnListener[] = [];
  const { web, slack } = config.channels;
  if (planned.includes('web') && web.port !== 0) out.push({ name: 'web chat', host: web.host, port: web.port });
  // Without an app token the Slack adapter runs Bolt's HTTP receiver.
  if (planned.includes('slack') && slack && !slack.appToken && slack.port !== 0) out.push({ name: 'Slack HTTP receiver', host: slack.host, port: slack.port });
  const { http, nodes } = config.gateway ?? {};
  if (http?.enabled && http.port !== 0) out.push({ name: 'HTTP tools API', host: http.host, port: http.port });
  if (nodes?.enabled && nodes.port !== 0) out.push({ name: 'node listener', host: nodes.host, port: nodes.port });
  if (config.ops?.enabled && config.ops.port !== 0) out.push({ name: 'ops listener', host: config.ops.host, port: config.ops.port });
  return out;
}

/** `host:port`, with IPv6 in brackets. */
export const listenerAddress = (l: OwnListener): string => `${l.host.includes(':') ? `[${l.host}]` : l.host}:${l.port}`;

/** This machine's interface addresses, zones dropped, in ipaddr.js's canonical form. */
export function interfaceAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) for (const entry of list ?? []) out.push(canonical(entry.address) ?? entry.address);
  return out;
}

function parseLiteral(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const host = normalizeHost(address).split('%')[0]!;
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return ipaddr.IPv4.parse(host);
  if (host.includes(':') && ipaddr.IPv6.isValid(host)) return ipaddr.IPv6.parse(host);
  return undefined;
}

function canonical(address: string): string | undefined {
  return parseLiteral(address)?.toNormalizedString();
}

/** Whether a connection to `address` lands on this machine. */
export function isThisHost(address: string, interfaces: readonly string[] = interfaceAddresses()): boolean {
  const parsed = parseLiteral(address);
  if (!parsed) return false;
  const forms: Array<ipaddr.IPv4 | ipaddr.IPv6> = [parsed];
  if (parsed.kind() === 'ipv6') {
    const inner = embeddedIpv4(parsed as ipaddr.IPv6);
    if (inner) forms.push(inner);
  }
  const local = new Set(interfaces);
  return forms.some((a) => ['loopback', 'unspecified'].includes(a.range()) || local.has(a.toNormalizedString()));
}

/** Names that mean this machine whatever DNS answers (`localhost`, `*.localhost`, its own host name). */
export function isThisHostName(host: string): boolean {
  const h = normalizeHost(host);
  const own = normalizeHost(hostname());
  return h === 'localhost' || h.endsWith('.localhost') || h === 'localhost.localdomain' || h === 'ip6-localhost' || h === 'ip6-loopback' || (own !== '' && h === own);
}

/**
 * The own listener a connection to `address:port` would reach, if any: a listener on that
 * port when the address is this machine's, or one bound to exactly that address.
 */
export function ownListenerAt(address: string, port: number, listeners: readonly OwnListener[], interfaces?: readonly string[]): OwnListener | undefined {
  const onPort = listeners.filter((l) => l.port === port);
  if (onPort.length === 0) return undefined;
  if (isThisHost(address, interfaces)) return onPort[0];
  const target = canonical(address);
  return onPort.find((l) => target !== undefined && canonical(l.host) === target);
}
