import * as z from 'zod';
import { lazySchema } from './lazy.js';

/**
 * `tools.toolSearch`: instead of every tool schema, the model gets `tool_search`,
 * `tool_describe` and `tool_call` and loads schemas as it needs them. `true` and `mode: code`
 * ask for OpenClaw's JavaScript bridge, which Warden does not have; they run as `tools`, as
 * OpenClaw does when it cannot start the bridge.
 */
export const toolSearchConfig = lazySchema(() => z.union([
  z.boolean(),
  z.strictObject({
    enabled: z.boolean().optional(),
    /** `tools` (default) and `directory` keep file and shell tools direct; `code` runs as `tools`. */
    mode: z.enum(['tools', 'directory', 'code']).optional(),
    /** Only for OpenClaw's code bridge; accepted and unused. */
    codeTimeoutMs: z.number().int().positive().optional(),
    /** Results when a search names no limit (default 8). */
    searchDefaultLimit: z.number().int().positive().optional(),
    /** The most results one search may return (default 20, at most 50). */
    maxSearchLimit: z.number().int().positive().optional(),
    /**
     * Warden's addition: Tool Search engages only when the tools it would defer are more than
     * `tools`, or their schemas more than `schemaTokens` (either; a number is `tools`). Unset:
     * always, as in OpenClaw.
     */
    threshold: z
      .union([
        z.number().int().min(0),
        z
          .strictObject({ tools: z.number().int().min(0).optional(), schemaTokens: z.number().int().min(0).optional() })
          .refine((t) => t.tools !== undefined || t.schemaTokens !== undefined, 'threshold needs tools or schemaTokens'),
      ])
      .optional(),
  }),
]));
export type ToolSearchConfig = z.infer<typeof toolSearchConfig>;
