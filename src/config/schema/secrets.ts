import * as z from 'zod';
import { lazySchema } from './lazy.js';

/**
 * `secrets.grants`: the only ways a stored secret reaches the world — as an environment
 * variable of exec commands (all of them, or those matching `commands` globs), of one MCP
 * server (`mcp:<server>`), or of one plugin's calls (`plugin:<id>`). A secret no grant names
 * is stored and listed, never handed out.
 */
export const secretGrant = lazySchema(() => z.strictObject({
  /** The secret's name, as stored (`A-Z 0-9 _`); it is the environment variable's name too. */
  name: z.string().regex(/^[A-Z_][A-Z0-9_]{0,63}$/, 'a secret name (A-Z, 0-9, _; an environment variable name)'),
  to: z.union([z.literal('exec'), z.string().regex(/^mcp:[A-Za-z0-9_-]+$/, 'mcp:<server>'), z.string().regex(/^plugin:[A-Za-z0-9_.@/-]+$/, 'plugin:<id>')]),
  /** exec only: glob patterns over the command text (`deploy *`, `/usr/bin/curl *`); absent: every command. */
  commands: z.array(z.string().min(1)).optional(),
  /** Agents the grant holds for; absent: every agent. */
  agents: z.array(z.string().min(1)).optional(),
}));
export type SecretGrant = z.infer<typeof secretGrant>;

export const secretsConfig = lazySchema(() => z.strictObject({
  grants: z.array(secretGrant).default([]),
}));
export type SecretsConfig = z.infer<typeof secretsConfig>;
