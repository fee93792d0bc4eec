import { describe, expect, it } from 'vitest';
import { bwrapAvailable, sandboxIdentity, sandboxNode } from '../sandbox.js';
import { probeEgress } from './probe.js';

describe.skipIf(!bwrapAvailable() || !sandboxNode())('the egress probe (warden doctor)', () => {
  it('finds only lo in the sandbox and the proxy behind the forwarder', async () => {
    const probe = await probeEgress(sandboxIdentity());
    expect(probe).toMatchObject({ ok: true });
    expect(probe.detail).toContain('only lo');
    expect(probe.detail).toContain('the proxy answers through the forwarder');
  }, 30_000);
});
