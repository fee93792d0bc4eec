import { describe, expect, it } from 'vitest';
import { containerSandboxAdvice, detectContainer, type ContainerRuntime, type ContainerSignals } from './container.js';
import type { SandboxProbe } from './sandbox-probe.js';

const signals = (files: Record<string, string>, env: NodeJS.ProcessEnv = {}): ContainerSignals => ({
  exists: (f) => f in files,
  read: (f) => files[f],
  env,
});

describe('detectContainer', () => {
  it.each<[string, ContainerSignals, ContainerRuntime | undefined]>([
    ['a plain host', signals({ '/proc/1/cgroup': '0::/init.scope\n' }), undefined],
    ['Docker (/.dockerenv)', signals({ '/.dockerenv': '' }), 'docker'],
    ['Docker by its cgroup', signals({ '/proc/1/cgroup': '12:pids:/docker/4f1c\n' }), 'docker'],
    ['containerd', signals({ '/proc/1/cgroup': '0::/system.slice/containerd.service\n' }), 'docker'],
    ['Podman (/run/.containerenv)', signals({ '/run/.containerenv': '' }), 'podman'],
    ['Podman by its variable', signals({}, { container: 'podman' }), 'podman'],
    ['Kubernetes by its service variable', signals({ '/.dockerenv': '' }, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }), 'kubernetes'],
    ['Kubernetes by its cgroup', signals({ '/proc/1/cgroup': '0::/kubepods/besteffort/pod1\n' }), 'kubernetes'],
    ['systemd-nspawn and others', signals({}, { container: 'systemd-nspawn' }), 'container'],
  ])('%s', (_name, s, expected) => {
    expect(detectContainer(s)).toBe(expected);
  });
});

const failed = (reason: string): SandboxProbe => ({ ok: false, identity: { uid: 1000, gid: 1000, staged: false }, checks: [], reason });

describe('containerSandboxAdvice', () => {
  it('says nothing when the sandbox works', () => {
    expect(containerSandboxAdvice({ ok: true, identity: { uid: 1000, gid: 1000, staged: false }, checks: [] }, 'docker')).toBeUndefined();
  });

  it.each<[string, string, ContainerRuntime, RegExp, RegExp]>([
    [
      "Docker's seccomp profile refuses user namespaces",
      'bubblewrap could not start the sandbox: bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.',
      'docker',
      /refuses to create user namespaces/,
      /--security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined/,
    ],
    ['the same on Kubernetes', 'bubblewrap could not start the sandbox: bwrap: Creating new namespace failed: Operation not permitted', 'kubernetes', /user namespaces/, /seccompProfile\.type: Unconfined.*procMount: Unmasked/],
    ['masked /proc', 'bubblewrap could not start the sandbox: bwrap: Can\'t mount proc on /newroot/proc: Operation not permitted', 'docker', /masks \/proc/, /systempaths=unconfined/],
    ['masked /proc on Kubernetes', "bubblewrap could not start the sandbox: bwrap: Can't mount proc on /newroot/proc: Operation not permitted", 'kubernetes', /masks \/proc/, /procMount: Unmasked/],
    ['no bubblewrap in the image', 'bubblewrap (/usr/bin/bwrap) is not installed', 'podman', /not installed in the image/, /apt-get install bubblewrap util-linux/],
    ['root without setpriv', 'running the sandbox as uid 65534 needs setpriv (util-linux)', 'docker', /setpriv \(util-linux\)/, /non-root user/],
    ['anything else', 'the sandbox lacks seccomp filter (Seccomp: 0)', 'docker', /does not start inside the docker container: the sandbox lacks seccomp filter/, /docs\/operations\.md/],
  ])('%s', (_name, reason, runtime, detail, fix) => {
    const advice = containerSandboxAdvice(failed(reason), runtime)!;
    expect(advice.detail).toMatch(detail);
    expect(advice.fix).toMatch(fix);
  });
});
