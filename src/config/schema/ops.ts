import * as z from 'zod';
import { lazySchema } from './lazy.js';
import { isLoopbackHost } from './gateway.js';

/**
 * `ops`: the operations listener (`/healthz`, `/readyz`, `/metrics`). It runs in every mode,
 * with or without the web chat, on loopback unless `host` says otherwise; a bind beyond
 * loopback must be asked for with `exposeBeyondLoopback: true`, since metrics name tools,
 * queue depths and approval counts an outsider has no business reading.
 */
export const opsConfig = lazySchema(() => z
  .strictObject({
    enabled: z.boolean().default(true),
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(3004),
    /** Required (true) for a `host` other than loopback: 0.0.0.0 inside a container, a LAN address. */
    exposeBeyondLoopback: z.boolean().default(false),
  })
  .superRefine((ops, ctx) => {
    if (ops.enabled && ops.host.trim() !== '' && !isLoopbackHost(ops.host) && !ops.exposeBeyondLoopback) {
      ctx.addIssue({
        code: 'custom',
        path: ['host'],
        message: `the ops listener binds ${ops.host}, beyond loopback: set ops.exposeBeyondLoopback: true to mean it (its /metrics has no token; keep it on a private network)`,
      });
    }
  }));
export type OpsConfig = z.infer<typeof opsConfig>;
