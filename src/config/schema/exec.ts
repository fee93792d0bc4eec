import { z } from 'zod';

export const execSecurity = z.enum(['deny', 'allowlist', 'full']);
export const execAsk = z.enum(['off', 'on-miss', 'always']);

export const allowlistEntry = z.strictObject({
  /** Resolved executable path or glob (`/usr/bin/git`, `~/bin/*`). */
  pattern: z.string().min(1),
  /** Argument prefix pattern: `status*` matches `git status -s`. */
  argPattern: z.string().optional(),
});

/** A custom safe-bin profile (reference A10): which flags may appear and how many positionals. */
export const safeBinProfile = z.strictObject({
  minPositional: z.number().int().min(0).optional(),
  maxPositional: z.number().int().min(0).optional(),
  allowedValueFlags: z.array(z.string()).optional(),
  deniedFlags: z.array(z.string()).optional(),
});

export const execConfig = z.strictObject({
  host: z.enum(['sandbox', 'gateway']).optional(),
  security: execSecurity.default('allowlist'),
  ask: execAsk.default('on-miss'),
  askFallback: execSecurity.default('deny'),
  allowlist: z.array(allowlistEntry).default([]),
  safeBins: z.array(z.string()).optional(),
  safeBinTrustedDirs: z.array(z.string()).default([]),
  safeBinProfiles: z.record(z.string(), safeBinProfile).default({}),
  strictInlineEval: z.boolean().default(true),
  timeoutSec: z.number().int().positive().default(1800),
  yieldMs: z.number().int().min(0).default(10_000),
  maxOutputChars: z.number().int().positive().default(200_000),
  applyPatch: z
    .strictObject({
      /** Model ids (`provider/model` or globs) that may see apply_patch. Default: OpenAI models. */
      allowModels: z.array(z.string()).default(['openai/*']),
    })
    .default({ allowModels: ['openai/*'] }),
});
export type ExecConfig = z.infer<typeof execConfig>;
