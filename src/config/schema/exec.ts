import ipaddr from 'ipaddr.js';
import * as z from 'zod';
import { lazySchema, once } from './lazy.js';
import { argPatternProblem } from '../arg-pattern.js';
import { SANDBOX_ID_MAX, SANDBOX_ID_MIN } from '../sandbox-id.js';

export const execSecurity = once(() => z.enum(['deny', 'allowlist', 'full']));
export const execAsk = once(() => z.enum(['off', 'on-miss', 'always']));

export const allowlistEntry = lazySchema(() => z.strictObject({
  /** Resolved executable path or glob (`/usr/bin/git`, `~/bin/*`), or a basename (`git`). */
  pattern: z.string().trim().min(1),
  /**
   * Argument pattern, an anchored glob over the arguments joined by spaces: `status*` matches
   * `git status -s`. A pattern starting with `^` is a JavaScript regex (OpenClaw's form), run
   * on the linear-time engine: one it cannot run is refused here, with the reason.
   */
  argPattern: z
    .string()
    .optional()
    .superRefine((p, ctx) => {
      const problem = p === undefined ? undefined : argPatternProblem(p);
      if (problem) ctx.addIssue({ code: 'custom', message: `argPattern ${problem}` });
    }),
  /**
   * The binary runs repository configuration (`git`: .git/config and hooks; `make`: the
   * Makefile; `npm`: package.json scripts; … see src/exec/repo-config.ts) and the operator
   * trusts that configuration in the agent's workspace. Without it, an entry for such a binary
   * asks every time: the agent can write that configuration. Off by default.
   */
  trustRepoConfig: z.boolean().optional(),
}));


/** A custom safe-bin profile (reference A10): which flags may appear and how many positionals. */
export const safeBinProfile = lazySchema(() => z.strictObject({
  minPositional: z.number().int().min(0).optional(),
  maxPositional: z.number().int().min(0).optional(),
  allowedValueFlags: z.array(z.string()).optional(),
  deniedFlags: z.array(z.string()).optional(),
}));

/**
 * `tools.exec.sandbox`: who sandboxed commands are on the host when Warden runs as root. The
 * sandbox is started as this uid/gid (never 0) in an unprivileged user namespace of its own, and
 * the workspace is handed to it (owner changed) before the first sandboxed command. Use a uid no
 * other process runs as. When Warden is not root, the sandbox runs as Warden's own uid and these
 * keys are not used.
 */
/**
 * `tools.exec.sandbox.network`: what a sandboxed command may reach. `none` (default): only the
 * sandbox's own loopback. `allowlist`: a proxy in Warden, reached through the proxy variables,
 * is the only way out; names on `allow` pass, others are refused or (`ask: on-miss`) asked on a
 * card. `open`: every public name passes. In every mode the URL guard refuses private, loopback,
 * link-local and metadata addresses and Warden's own listeners; `allowCidrs` opens named ranges
 * (never metadata addresses, never Warden's own listeners).
 */
export const execNetworkAllowEntry = lazySchema(() => z
  .string()
  .trim()
  .min(1)
  .superRefine((entry, ctx) => {
    const problem = networkAllowProblem(entry);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }));

/** Why an allow entry is malformed (`example.com`, `*.example.com`, `example.com:8443`), or undefined. */
export function networkAllowProblem(entry: string): string | undefined {
  if (/[\s/@?#]/.test(entry)) return `"${entry}": a host name, not a URL`;
  const colon = entry.lastIndexOf(':');
  const bracketed = entry.startsWith('[');
  const host = bracketed ? entry.slice(1, entry.indexOf(']')) : colon > 0 && entry.indexOf(':') === colon ? entry.slice(0, colon) : entry;
  const portText = bracketed ? entry.slice(entry.indexOf(']') + 1).replace(/^:/, '') : colon > 0 && entry.indexOf(':') === colon ? entry.slice(colon + 1) : '';
  if (portText !== '' && !(/^[0-9]{1,5}$/.test(portText) && Number(portText) >= 1 && Number(portText) <= 65535)) return `"${entry}": the port must be 1-65535`;
  if (host === '*' || host === '*.' || host === '') return `"${entry}": a bare * is not an allowlist (use mode: open)`;
  if (host.slice(1).includes('*') || (host.startsWith('*') && !host.startsWith('*.'))) return `"${entry}": only a leading "*." glob is supported`;
  return undefined;
}

export const execNetworkConfig = lazySchema(() => z.strictObject({
  mode: z.enum(['none', 'allowlist', 'open']).default('none'),
  allow: z.array(execNetworkAllowEntry).default([]),
  ask: z.enum(['off', 'on-miss']).default('off'),
  /** Private ranges a command may reach (`10.0.0.0/8`, `fd00::/8`); metadata addresses and Warden's own listeners never. */
  allowCidrs: z
    .array(z.string().trim().min(1))
    .default([])
    .superRefine((list, ctx) => {
      for (const [i, cidr] of list.entries()) if (!isCidr(cidr)) ctx.addIssue({ code: 'custom', path: [i], message: `"${cidr}" is not a CIDR range (a.b.c.d/n or an IPv6 prefix)` });
    }),
  /** How long a connection waits for the card (ask: on-miss) before it is refused. */
  askTimeoutSec: z.number().int().min(5).max(600).default(120),
}));
export type ExecNetworkConfig = z.infer<typeof execNetworkConfig>;
export const DEFAULT_EXEC_NETWORK: ExecNetworkConfig = { mode: 'none', allow: [], ask: 'off', allowCidrs: [], askTimeoutSec: 120 };

function isCidr(text: string): boolean {
  try {
    ipaddr.parseCIDR(text);
    return true;
  } catch {
    return false;
  }
}

export const execSandboxConfig = lazySchema(() => z.strictObject({
  // Absent: Warden's own id, 65533 or WARDEN_SANDBOX_ID (config/sandbox-id.ts), not `nobody`, which daemons share.
  uid: z.number().int().min(SANDBOX_ID_MIN).max(SANDBOX_ID_MAX).optional(),
  gid: z.number().int().min(SANDBOX_ID_MIN).max(SANDBOX_ID_MAX).optional(),
  /**
   * Start sandboxed commands (Warden as root) even while another host process runs as `uid`,
   * which could then ptrace them or take their descriptors. Off: such a start is refused.
   */
  allowSharedUid: z.boolean().default(false),
  network: execNetworkConfig.default(DEFAULT_EXEC_NETWORK),
}));

export const execConfig = lazySchema(() => z.strictObject({
  host: z.enum(['sandbox', 'gateway']).optional(),
  sandbox: execSandboxConfig.default({ allowSharedUid: false, network: DEFAULT_EXEC_NETWORK }),
  security: execSecurity().default('allowlist'),
  ask: execAsk().default('on-miss'),
  askFallback: execSecurity().default('deny'),
  allowlist: z.array(allowlistEntry).default([]),
  /**
   * The read-only commands of src/exec/read-only.ts — ls, cat, head, tail, wc, grep, find, stat,
   * file, du, sort, uniq and git's reading subcommands, each with only its reading options — run
   * without asking, on the sandbox host only (never on the gateway host, where they would read
   * Warden's own state). They add to `allowlist`; `false` leaves only your own entries.
   */
  defaultAllowlist: z.boolean().default(true),
  safeBins: z.array(z.string()).optional(),
  safeBinTrustedDirs: z.array(z.string()).default([]),
  safeBinProfiles: z.record(z.string(), safeBinProfile).default({}),
  strictInlineEval: z.boolean().default(true),
  /** How long an allow-always grant for a command lasts; absent = until removed. */
  allowAlwaysTtlSec: z.number().int().positive().optional(),
  /** Kill timeout per command; the call's `timeout` overrides it. */
  timeoutSec: z.number().int().positive().default(1800),
  /** Auto-background window: a command still running after this long becomes a `process` job. */
  backgroundMs: z.number().int().min(10).max(120_000).default(10_000),
  /** Aggregate output kept per command (head and tail beyond it are dropped with a notice). */
  maxOutputChars: z.number().int().min(1000).max(200_000).default(200_000),
  /** How long finished background jobs stay visible to `process`. */
  cleanupMs: z.number().int().min(60_000).max(10_800_000).default(1_800_000),
  applyPatch: z
    .strictObject({
      /** false: no model sees apply_patch. */
      enabled: z.boolean().default(true),
      /** Model ids (`provider/model` or globs) that may see apply_patch. Default: OpenAI models. */
      allowModels: z.array(z.string()).default(['openai/*']),
    })
    .default({ enabled: true, allowModels: ['openai/*'] }),
}));
export type ExecConfig = z.infer<typeof execConfig>;

/** Process-wide settings: one sandbox host, one job registry, one tool surface filter. */
const GLOBAL_ONLY = new Set(['host', 'sandbox', 'cleanupMs', 'applyPatch']);

/**
 * `agents.list[].tools.exec`: the policy keys without defaults. A key an agent sets overrides
 * the global one for that agent; `allowlist` entries and `safeBinProfiles` add to the global ones.
 */
export const execOverrides = lazySchema((): z.ZodType<Partial<Omit<ExecConfig, 'host' | 'sandbox' | 'cleanupMs' | 'applyPatch'>>> => z.strictObject(
  Object.fromEntries(
    Object.entries(execConfig.unwrap().shape)
      .filter(([key]) => !GLOBAL_ONLY.has(key))
      .map(([key, field]) => [key, (field instanceof z.ZodDefault ? field.unwrap() : field).optional()]),
  ),
) as unknown as z.ZodType<Partial<Omit<ExecConfig, 'host' | 'sandbox' | 'cleanupMs' | 'applyPatch'>>>);
