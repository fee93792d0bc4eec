import { isLoopbackHost, type WardenConfig } from '../config/index.js';
import type { AuditFinding } from '../config/audit-finding.js';

/** `warden audit` for the ops listener: a bind beyond loopback serves metrics without a token. */
export function auditOps(config: Pick<WardenConfig, 'ops'>): AuditFinding[] {
  const ops = config.ops;
  if (!ops?.enabled || isLoopbackHost(ops.host)) return [];
  return [
    {
      id: 'ops.bind',
      severity: 'warn',
      message: `the ops listener serves /healthz, /readyz and /metrics (tool names, approval counts, queue depths) on ${ops.host}:${ops.port}, beyond this machine, without a token`,
      fix: 'keep that address on a private network (the orchestrator and Prometheus only), or bind ops.host to 127.0.0.1',
    },
  ];
}
