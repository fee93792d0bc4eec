import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_EXEC_NETWORK } from '../../config/schema/exec.js';
import { startCommand } from '../run.js';
import { bwrapAvailable, ownIds, sandboxNode, type SandboxIdentity } from '../sandbox.js';
import { FORWARDER_PORT } from './forwarder.js';
import { EgressProxy } from './proxy.js';

/**
 * Whether this host supports sandbox egress (`warden doctor`), from one real sandboxed run:
 * the sandbox's network namespace holds only `lo`, and a connection to the forwarder reaches
 * the proxy (which refuses it: the probe's allowlist is empty, so nothing leaves the machine).
 */
export interface EgressProbe {
  ok: boolean;
  detail: string;
}

const PROBE = `
const net = require('node:net');
const fs = require('node:fs');
const ifaces = fs.readFileSync('/proc/net/dev', 'utf8').split('\\n').slice(2).map((l) => l.split(':')[0].trim()).filter(Boolean);
const s = net.connect(${FORWARDER_PORT}, '127.0.0.1', () => s.write('CONNECT probe.invalid:443 HTTP/1.1\\r\\nHost: probe.invalid:443\\r\\n\\r\\n'));
let got = '';
s.on('data', (d) => { got += d; });
s.on('close', () => console.log(JSON.stringify({ ifaces, status: got.split('\\r\\n')[0] })));
s.on('error', (e) => console.log(JSON.stringify({ ifaces, status: 'error ' + e.code })));
`;

export async function probeEgress(identity: SandboxIdentity): Promise<EgressProbe> {
  if (!bwrapAvailable()) return { ok: false, detail: 'bubblewrap is not installed' };
  const node = sandboxNode();
  if (!node) return { ok: false, detail: 'no node in a system directory (/usr/bin/node) to run the forwarder inside the sandbox' };
  const scratch = mkdtempSync(path.join(tmpdir(), 'warden-egress-probe-'));
  let proxy: EgressProxy | undefined;
  try {
    if (identity.uid !== ownIds().uid) chownSync(scratch, identity.uid, identity.gid);
    proxy = await EgressProxy.start({ network: { ...DEFAULT_EXEC_NETWORK, mode: 'allowlist' }, onDecision: () => {} });
    const job = startCommand({
      script: `"${node}" -e "$PROBE"`,
      label: 'egress probe',
      host: 'sandbox',
      workspace: scratch,
      cwd: scratch,
      env: { PATH: '/usr/bin:/bin', PROBE },
      maxOutputChars: 20_000,
      timeoutMs: 20_000,
      identity,
      egress: { socket: proxy.socketPath, node },
    });
    await job.done;
    const out = job.outputText();
    const line = out.split('\n').find((l) => l.startsWith('{'));
    if (!line) return { ok: false, detail: `the probe did not report: ${out.trim().slice(-300) || job.error || `exit ${job.exitCode}`}` };
    const report = JSON.parse(line) as { ifaces: string[]; status: string };
    const onlyLo = report.ifaces.length === 1 && report.ifaces[0] === 'lo';
    const reached = report.status.startsWith('HTTP/1.1 403');
    if (!onlyLo) return { ok: false, detail: `the sandbox's network namespace has ${report.ifaces.join(', ')}, not only lo` };
    if (!reached) return { ok: false, detail: `the forwarder did not reach the proxy (${report.status})` };
    return { ok: true, detail: `own network namespace (only lo); the proxy answers through the forwarder (node ${node}) on the sandbox's 127.0.0.1:${FORWARDER_PORT}` };
  } catch (err) {
    return { ok: false, detail: `the probe failed: ${(err as Error).message}` };
  } finally {
    await proxy?.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
