import type { WardenConfig } from '../config/schema/index.js';
import type { AuditFinding } from '../config/audit-finding.js';
import { effectiveExecConfig } from './check.js';
import type { SandboxCheck, SandboxProbe } from './sandbox-probe.js';
import { resolveExecHost, type SandboxIdentity } from './sandbox.js';

/** What to do when a sandbox property is missing. */
export const SANDBOX_FIXES: Record<SandboxCheck['property'], string> = {
  'user namespace':
    'allow unprivileged user namespaces (sysctl user.max_user_namespaces > 0; Debian before 11: kernel.unprivileged_userns_clone=1; Ubuntu: an AppArmor profile for /usr/bin/bwrap; in a container: a seccomp profile that allows them)',
  'capabilities dropped': 'use bubblewrap 0.4 or newer (--cap-drop), not installed setuid',
  no_new_privs: 'use bubblewrap 0.4 or newer',
  'seccomp filter': 'use a kernel with seccomp filters (CONFIG_SECCOMP_FILTER) on x86_64 or aarch64 and bubblewrap with --seccomp',
};

/** Who the sandbox runs as, in words. */
export function describeIdentity(identity: SandboxIdentity): string {
  return identity.staged
    ? `host uid ${identity.uid}, gid ${identity.gid} (tools.exec.sandbox; Warden runs as root)`
    : `Warden's own uid ${identity.uid}, gid ${identity.gid}`;
}

/**
 * The sandbox findings: where exec runs sandboxed, whether this host gives every property (and
 * so whether exec works at all: the sandbox host refuses rather than run a command on the host).
 * Without bubblewrap the exec findings of audit.ts speak.
 */
export function auditSandbox(config: WardenConfig, env: { hasBwrap: boolean; probe: SandboxProbe }): AuditFinding[] {
  const exec = effectiveExecConfig(config);
  if (!env.hasBwrap || exec.security === 'deny' || resolveExecHost(exec.host, env.hasBwrap) !== 'sandbox') return [];
  const { probe } = env;
  if (probe.ok) {
    return [
      {
        id: 'exec.sandbox-isolation',
        severity: 'info',
        message: `sandboxed commands run as ${describeIdentity(probe.identity)}, in a user namespace of their own, with no capabilities, no_new_privs and the seccomp filter (checked by running the sandbox)`,
        fix: 'nothing to do',
      },
    ];
  }
  const missing = probe.checks.filter((c) => !c.ok);
  return [
    {
      id: 'exec.sandbox-isolation-unavailable',
      severity: 'warn',
      message: `tools.exec.host is sandbox but this host cannot isolate commands (${probe.reason ?? 'unknown'}): exec refuses every command and never runs one on the host instead`,
      fix: fixFor(probe, missing),
    },
  ];
}

/** The fixes for what is missing; when the probe could not even start, the one its reason points at. */
export function fixFor(probe: SandboxProbe, missing: readonly SandboxCheck[] = probe.checks.filter((c) => !c.ok)): string {
  const started = missing.some((c) => !c.detail.startsWith('not checked'));
  if (started) return [...new Set(missing.map((c) => SANDBOX_FIXES[c.property]))].join('; ');
  if (/namespace/i.test(probe.reason ?? '')) return SANDBOX_FIXES['user namespace'];
  return 'fix what the message names, then run warden doctor';
}
