import * as z from 'zod';
import { lazySchema, once } from './lazy.js';

/**
 * `mcp.servers.<name>`: MCP servers whose tools join the surface as `<server>__<tool>`
 * (src/mcp). A server is started as a child process (`command`, stdio) or reached over
 * streamable HTTP (`url`). Names follow OpenClaw's config (`mcp.servers`); its other
 * spellings (`requestTimeoutMs`, `toolFilter`, …) are not translated yet.
 */

/** A value in `env` or `headers`: OpenClaw accepts numbers and booleans too; they are sent as text. */
const textValue = once(() => z.union([z.string(), z.number(), z.boolean()]).transform((v) => String(v)));

/** How a server's tools ask for approval: by their annotations (`auto`), always, or never. */
export const MCP_APPROVAL_MODES = ['auto', 'always', 'never'] as const;
export const mcpApprovalMode = once(() => z.enum(MCP_APPROVAL_MODES, {
  error: (issue) => `expected one of ${MCP_APPROVAL_MODES.join(', ')}, got ${JSON.stringify(issue.input)}`,
}));
export type McpApprovalMode = z.infer<ReturnType<typeof mcpApprovalMode>>;

/** `*` globs over the server's own tool names (OpenClaw's toolFilter syntax). */
const toolNamePatterns = once(() => z.array(z.string().trim().min(1, 'a tool name or * glob')));

export const mcpServerConfig = lazySchema(() => z
  .strictObject({
    /** `false` keeps the server stopped and its tools off every surface. */
    enabled: z.boolean().optional(),
    /** stdio: the program to start (resolved through PATH), its arguments, variables and folder. */
    command: z.string().trim().min(1).optional(),
    args: z.array(z.string()).optional(),
    /**
     * The only variables the child gets besides a minimal base (PATH, HOME, USER, LANG, …);
     * Warden's own environment — tokens, model keys — never reaches it. `${VAR}` reads the
     * variable when the config loads.
     */
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), textValue()).optional(),
    /** Relative to the config file's folder (the default). */
    cwd: z.string().min(1).optional(),
    /** Streamable HTTP: the server's endpoint (http or https). */
    url: z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' }).optional(),
    /** Sent with every request to `url` (only there: never on a redirect, which is refused). */
    headers: z.record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'an HTTP header name'), textValue()).optional(),
    /**
     * Let `url` resolve to a private, loopback or link-local address (cloud metadata and Warden's
     * own listeners stay refused). Default: when the URL names such an address or `localhost`.
     */
    allowPrivateNetwork: z.boolean().optional(),
    /** Longest one call may take before it is cancelled (default 60 s). */
    timeoutSec: z.number().positive().max(3600).optional(),
    /** Longest connecting and listing tools may take per attempt (default 30 s). */
    connectTimeoutSec: z.number().positive().max(600).optional(),
    /** Only these of the server's tools (exact names or `*` globs); absent = all. */
    toolsAllow: toolNamePatterns().optional(),
    /** None of these (beats toolsAllow). */
    toolsDeny: toolNamePatterns().optional(),
    /** `auto` (default): a tool the server marks destructive, or does not mark read-only, asks. */
    approval: mcpApprovalMode().optional(),
    /** Per tool (by the server's name for it): `approval` overrides the server's. */
    tools: z.record(z.string().min(1), z.strictObject({ approval: mcpApprovalMode().optional() })).optional(),
    /** The most tools one server may add (default 1,000); a longer list is cut, with a diagnostic. */
    maxTools: z.number().int().positive().max(10_000).optional(),
    /** Calls to this server may run at the same time (default: one after another, as OpenClaw). */
    supportsParallelToolCalls: z.boolean().optional(),
  })
  .superRefine((server, ctx) => {
    if ((server.command === undefined) === (server.url === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'an MCP server needs exactly one of command (stdio) or url (streamable HTTP)' });
      return;
    }
    const misplaced = server.url !== undefined ? (['args', 'env', 'cwd'] as const) : (['headers', 'allowPrivateNetwork'] as const);
    for (const key of misplaced) {
      if (server[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `${key} applies to ${server.url !== undefined ? 'stdio servers (command)' : 'HTTP servers (url)'} only` });
    }
  }));
export type McpServerConfig = z.infer<typeof mcpServerConfig>;

export const mcpConfig = lazySchema(() => z.strictObject({
  servers: z
    .record(
      z
        .string()
        .min(1, 'a server name')
        .refine((n) => n !== '__proto__', 'MCP server name "__proto__" is reserved; rename the server'),
      mcpServerConfig,
    )
    .default({}),
}));
export type McpConfig = z.infer<typeof mcpConfig>;
