// Sandbox egress: what the proxy adds per connection and to a 10 MB download, against the same
// request made directly on loopback. Host-side rows go through the proxy's Unix socket; the
// sandbox rows run curl inside the real sandbox, through the forwarder and the proxy (as a
// command does), against curl on the host. Short runs.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_EXEC_NETWORK } from '../src/config/schema/exec.js';
import { EgressProxy } from '../src/exec/egress/proxy.js';
import { startCommand } from '../src/exec/run.js';
import { bwrapAvailable, ownIds, sandboxIdentity, sandboxNode } from '../src/exec/sandbox.js';
import { type Bench, fmtMs, measure } from './harness.js';

const TEN_MB = Buffer.alloc(10 * 1024 * 1024, 'x');

function get(options: http.RequestOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ agent: false, ...options }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => resolve(n));
    });
    req.on('error', reject);
    req.end();
  });
}

const mbps = (bytes: number, ms: number) => `${((bytes / (1024 * 1024)) / (ms / 1000)).toFixed(0)} MiB/s`;

const bench: Bench = async (report) => {
  const server = http.createServer((req, res) => (req.url === '/10mb' ? res.end(TEN_MB) : res.end('ok')));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const identity = sandboxIdentity();
  const proxy = await EgressProxy.start({
    network: { ...DEFAULT_EXEC_NETWORK, mode: 'allowlist', allow: [`bench.test:${port}`], allowCidrs: ['127.0.0.1/32'] },
    resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    onDecision: () => {},
  });
  try {
    const direct = await measure(() => get({ host: '127.0.0.1', port, path: '/' }), { iterations: 300, warmup: 30 });
    const proxied = await measure(() => get({ socketPath: proxy.socketPath, path: `http://bench.test:${port}/` }), { iterations: 300, warmup: 30 });
    report({ name: 'connection + small GET, direct on loopback', value: fmtMs(direct.median), note: `p99 ${fmtMs(direct.p99)}` });
    report({ name: 'connection + small GET, through the proxy', value: fmtMs(proxied.median), note: `p99 ${fmtMs(proxied.p99)}; overhead ${fmtMs(proxied.median - direct.median)} per connection` });

    const d10 = await measure(() => get({ host: '127.0.0.1', port, path: '/10mb' }), { iterations: 5, warmup: 1 });
    const p10 = await measure(() => get({ socketPath: proxy.socketPath, path: `http://bench.test:${port}/10mb` }), { iterations: 5, warmup: 1 });
    report({ name: '10 MB download, direct on loopback', value: fmtMs(d10.median), note: mbps(TEN_MB.length, d10.median) });
    report({ name: '10 MB download, through the proxy', value: fmtMs(p10.median), note: `${mbps(TEN_MB.length, p10.median)} (${(p10.median / d10.median).toFixed(2)}× direct)` });

    const node = sandboxNode();
    if (bwrapAvailable() && node) {
      const ws = mkdtempSync(path.join(tmpdir(), 'warden-egress-bench-'));
      if (identity.uid !== ownIds().uid) chownSync(ws, identity.uid, identity.gid);
      const fmt = '%{time_connect} %{time_total}\\n';
      // Async: the server answering is in this process.
      const curl = async (url: string) => Number((await promisify(execFile)('curl', ['-sS', '-o', '/dev/null', '-w', '%{time_total}', url], { encoding: 'utf8' })).stdout) * 1000;
      const hostTotals: number[] = [];
      for (let i = 0; i < 5; i++) hostTotals.push(await curl(`http://127.0.0.1:${port}/10mb`));
      const job = startCommand({
        script: `for i in 1 2 3 4 5; do curl -sS -o /dev/null -w '${fmt}' http://bench.test:${port}/10mb; done; for i in 1 2 3 4 5; do curl -sS -o /dev/null -w '${fmt}' http://bench.test:${port}/; done`,
        label: 'bench',
        host: 'sandbox',
        workspace: ws,
        cwd: ws,
        env: { PATH: '/usr/bin:/bin' },
        maxOutputChars: 20_000,
        identity,
        egress: { socket: proxy.socketPath, node },
      });
      await job.done;
      const lines = job.outputText().trim().split('\n').map((l) => l.split(' ').map((x) => Number(x) * 1000));
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const sandBig = median(lines.slice(0, 5).map((l) => l[1]!));
      const sandSmall = median(lines.slice(5).map((l) => l[1]!));
      const hostSmallTotals: number[] = [];
      for (let i = 0; i < 5; i++) hostSmallTotals.push(await curl(`http://127.0.0.1:${port}/`));
      report({ name: 'curl small GET: host direct vs sandbox → forwarder → proxy', value: `${fmtMs(median(hostSmallTotals))} vs ${fmtMs(sandSmall)}` });
      report({ name: 'curl 10 MB: host direct vs sandbox → forwarder → proxy', value: `${fmtMs(median(hostTotals))} vs ${fmtMs(sandBig)}`, note: `${mbps(TEN_MB.length, median(hostTotals))} vs ${mbps(TEN_MB.length, sandBig)}` });
      rmSync(ws, { recursive: true, force: true });
    }
  } finally {
    await proxy.close();
    server.close();
  }
};

export default bench;
