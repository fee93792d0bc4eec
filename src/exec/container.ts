import { existsSync, readFileSync } from 'node:fs';
import type { SandboxProbe } from './sandbox-probe.js';

export type ContainerRuntime = 'docker' | 'podman' | 'kubernetes' | 'container';

/** What `detectContainer` reads; the real filesystem and environment by default. */
export interface ContainerSignals {
  exists(file: string): boolean;
  read(file: string): string | undefined;
  env: NodeJS.ProcessEnv;
}

/** The real filesystem, and `env` for the variables runtimes set. */
export const hostContainerSignals = (env: NodeJS.ProcessEnv): ContainerSignals => ({
  exists: existsSync,
  read: (file) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  },
  env,
});

/** Which container runtime Warden runs under, if any, from the marks each one leaves. */
export function detectContainer(signals: ContainerSignals = hostContainerSignals(process.env)): ContainerRuntime | undefined {
  if (signals.env.KUBERNETES_SERVICE_HOST) return 'kubernetes';
  if (signals.exists('/run/.containerenv') || signals.env.container === 'podman') return 'podman';
  if (signals.exists('/.dockerenv')) return 'docker';
  const cgroup = signals.read('/proc/1/cgroup') ?? '';
  if (/kubepods/.test(cgroup)) return 'kubernetes';
  if (/docker|containerd/.test(cgroup)) return 'docker';
  if (signals.env.container) return 'container';
  return undefined;
}

export interface ContainerAdvice {
  /** What the container lacks, in the probe's terms. */
  detail: string;
  /** What to give it, for this runtime. */
  fix: string;
}

/**
 * What a container must allow for the sandbox, read from why the probe failed. Pure. Docker's
 * and Podman's default seccomp profiles refuse the unshare/clone calls that create a user
 * namespace, AppArmor may refuse them too, and the masked paths over /proc stop bubblewrap
 * from mounting the sandbox's own /proc.
 */
export function containerSandboxAdvice(probe: SandboxProbe, runtime: ContainerRuntime): ContainerAdvice | undefined {
  if (probe.ok) return undefined;
  const reason = probe.reason ?? '';
  const k8s = runtime === 'kubernetes';
  const flags = (docker: string, kube: string) => (k8s ? kube : docker);
  // redos-ok: the reason is the sandbox probe's own sentence, from its fixed script's last two lines of output (capped at 20,000 characters).
  if (/bubblewrap .* is not installed/.test(reason)) {
    return { detail: 'bubblewrap is not installed in the image', fix: 'apt-get install bubblewrap util-linux in the image (the shipped Dockerfile does)' };
  }
  // redos-ok: the probe's own sentence, as above.
  if (/needs .*\(util-linux\)/.test(reason)) {
    return { detail: 'the image lacks setpriv (util-linux), needed to run the sandbox as another uid when Warden runs as root', fix: 'apt-get install util-linux, or run Warden as a non-root user (the shipped Dockerfile does both)' };
  }
  if (/mount proc/i.test(reason)) {
    return {
      detail: `${runtime} masks /proc, so bubblewrap cannot mount the sandbox's own /proc`,
      fix: flags('docker run --security-opt systempaths=unconfined (compose: security_opt: [systempaths=unconfined])', 'securityContext.procMount: Unmasked on the container'),
    };
  }
  if (/namespace/i.test(reason)) {
    return {
      detail: `${runtime} refuses to create user namespaces inside the container (its seccomp profile or AppArmor blocks unshare/clone with CLONE_NEWUSER)`,
      fix: flags(
        'docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined, or a seccomp profile that also allows unshare and clone with CLONE_NEWUSER; the host must allow user namespaces (user.max_user_namespaces > 0)',
        'securityContext.seccompProfile.type: Unconfined (or a Localhost profile that allows unshare/clone with CLONE_NEWUSER), an AppArmor profile of unconfined, and procMount: Unmasked; the node must allow user namespaces',
      ),
    };
  }
  return { detail: `the sandbox does not start inside the ${runtime} container: ${reason}`, fix: 'see docs/operations.md (the container needs user namespaces, an unmasked /proc and seccomp filters)' };
}
