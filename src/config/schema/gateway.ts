import * as z from 'zod';
import { lazySchema, once } from './lazy.js';
import { toolList } from './policy.js';

/** A token or secret; an empty value (`${TOKEN:-}` with the variable unset) means "not configured". */
const secret = once(() => z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v)));

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
/** A bind address that only this machine reaches (all of 127.0.0.0/8 counts). */
export const isLoopbackHost = (host: string): boolean => LOOPBACK.has(host.trim().toLowerCase()) || /^127(\.\d{1,3}){3}$/.test(host.trim());

const tokenLabel = once(() => z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/i, 'token labels are 1–32 characters: letters, digits, "-" and "_"'));

/**
 * `gateway.http`: the HTTP tools API (`POST /tools/invoke`, `GET /tools`). Off unless enabled;
 * loopback unless `host` says otherwise. Each token has a label, which the audit log records
 * for every call and the rate limit counts by.
 */
export const gatewayHttpConfig = lazySchema(() => z
  .strictObject({
    enabled: z.boolean().default(false),
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(3002),
    /** The bearer token, labelled `default`. */
    token: secret(),
    /** More tokens by label (`ci: ${CI_TOKEN}`), each audited and rate-limited on its own. */
    tokens: z.record(tokenLabel(), z.string().min(16, 'an HTTP API token needs at least 16 characters')).optional(),
    tools: z
      .strictObject({
        /** Names taken off the default HTTP deny list (OpenClaw's `gateway.tools.allow`). */
        allow: toolList().optional(),
      })
      .optional(),
    /** Calls per token per minute (default 60). */
    rateLimit: z.strictObject({ perMinute: z.number().int().min(1).max(100_000).default(60) }).optional(),
  })
  .superRefine((http, ctx) => {
    if (!http.enabled) return;
    if (http.token === undefined && Object.keys(http.tokens ?? {}).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['token'], message: 'gateway.http is enabled but has no token: set gateway.http.token (or gateway.http.tokens)' });
    }
    if (http.token !== undefined && http.token.length < 16) ctx.addIssue({ code: 'custom', path: ['token'], message: 'an HTTP API token needs at least 16 characters' });
  }));
export type GatewayHttpConfig = z.infer<typeof gatewayHttpConfig>;

/**
 * `gateway.nodes`: the WebSocket listener `warden node` pairs with. Off unless enabled; a bind
 * other than loopback needs TLS (`tls.cert`, `tls.key`), and the node pins the certificate's
 * SHA-256 fingerprint.
 */
export const gatewayNodesConfig = lazySchema(() => z
  .strictObject({
    enabled: z.boolean().default(false),
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(3003),
    tls: z.strictObject({ cert: z.string().min(1), key: z.string().min(1) }).optional(),
    /** How long a node's pairing request (and its one-time code) stays open. */
    pairingTimeoutSec: z.number().int().min(30).max(3600).default(600),
    /** How long a call to a node may take before it fails (default 1,860 s, exec's limit and a minute). */
    callTimeoutSec: z.number().int().min(1).max(7200).default(1860),
  })
  .superRefine((nodes, ctx) => {
    if (nodes.enabled && !isLoopbackHost(nodes.host) && !nodes.tls) {
      ctx.addIssue({ code: 'custom', path: ['tls'], message: `gateway.nodes binds ${nodes.host}, beyond loopback: set gateway.nodes.tls.cert and .key (nodes connect with wss:// and pin its fingerprint)` });
    }
  }));
export type GatewayNodesConfig = z.infer<typeof gatewayNodesConfig>;

export const gatewayConfig = lazySchema(() => z.strictObject({
  http: gatewayHttpConfig.optional(),
  nodes: gatewayNodesConfig.optional(),
  /** Watch the config file and apply valid changes to new turns (default true). */
  reload: z.strictObject({ watch: z.boolean().default(true), debounceMs: z.number().int().min(0).max(60_000).default(300) }).optional(),
}));
export type GatewayConfig = z.infer<typeof gatewayConfig>;
