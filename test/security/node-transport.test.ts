// The node protocol as an attacker would try it: a gateway impersonated with another
// certificate, a stolen name without its token, a revoked token, frames before pairing.
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type { NodeHub } from '../../src/control/nodes/hub.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { startNode } from '../../src/node/start-node.js';

let warden: RunningWarden;
let hub: NodeHub;
let root: string;
let fingerprint: string;

function selfSigned(dir: string, name: string) {
  const key = path.join(dir, `${name}.key`);
  const cert = path.join(dir, `${name}.crt`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
  return { key, cert, fingerprint: new X509Certificate(readFileSync(cert)).fingerprint256 };
}

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'warden-node-tls-'));
  mkdirSync(path.join(root, 'workspace'));
  const tls = selfSigned(root, 'gateway');
  fingerprint = tls.fingerprint;
  const parsed = parseConfig({ dataDir: path.join(root, 'data'), channels: { web: { port: 0 } }, agents: { defaults: { workspace: path.join(root, 'workspace') } }, gateway: { nodes: { enabled: true, port: 0, tls: { cert: tls.cert, key: tls.key } } } }, path.join(root, 'w.yaml'));
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden(parsed.value, { env: {} });
  if (!started.ok) throw started.error;
  warden = started.warden;
  hub = warden.listeners.get<NodeHub>('node listener')!;
}, 30_000);
afterAll(async () => {
  await warden?.stop();
});

const nodeLoaded = () => {
  const r = parseConfig({ agents: { defaults: { workspace: path.join(root, 'workspace') } } }, path.join(root, 'n.yaml'));
  if (!r.ok) throw r.error;
  return r.value;
};

describe('node transport', () => {
  it('a node refuses a gateway whose certificate is not the pinned one, before it says anything', async () => {
    const other = selfSigned(root, 'other').fingerprint;
    const lines: string[] = [];
    const r = await startNode({ gateway: hub.url!, name: 'pinned', loaded: nodeLoaded(), stateDir: path.join(root, 's1'), fingerprint: other, say: (l) => lines.push(l) });
    if (!r.ok) throw new Error(r.error);
    await expect(r.run.done).resolves.toEqual({ ok: false, reason: 'certificate fingerprint mismatch' });
    await r.close();
    expect(hub.pending()).toEqual([]);
  });

  it('with the pinned fingerprint it connects over wss:// and asks to pair', async () => {
    const lines: string[] = [];
    const r = await startNode({ gateway: hub.url!, name: 'pinned', loaded: nodeLoaded(), stateDir: path.join(root, 's2'), fingerprint: `sha256:${fingerprint.toLowerCase()}`, say: (l) => lines.push(l) });
    if (!r.ok) throw new Error(r.error);
    await expect.poll(() => lines.join('\n'), { timeout: 10_000 }).toContain('Pairing code:');
    r.run.stop();
    await r.close();
  });

  const raw = (frames: unknown[]) =>
    new Promise<{ code: number; messages: string[] }>((resolve) => {
      const ws = new WebSocket(hub.url!, { rejectUnauthorized: false });
      const messages: string[] = [];
      ws.on('open', () => frames.forEach((f) => ws.send(typeof f === 'string' ? f : JSON.stringify(f))));
      ws.on('message', (d) => messages.push(String(d)));
      ws.on('close', (code) => resolve({ code, messages }));
    });

  it.each([
    ['a hello for an unpaired name', [{ type: 'hello', name: 'ghost', token: 'guess' }]],
    ['a result before any hello', [{ type: 'result', id: 'x', result: { content: [] } }]],
    ['a name outside the allowed form', [{ type: 'pair', name: '../../etc' }]],
    ['a frame that is no JSON', ['not json']],
    ['an approval before any hello', [{ type: 'approval', id: 'a', callId: 'c', request: { kind: 'exec', tool: 'exec', title: 't', preview: 'p', fullText: 'f' } }]],
  ])('%s is refused and the connection closed', async (_what, frames) => {
    const { code, messages } = await raw(frames);
    expect(code).toBe(4401);
    expect(messages.some((m) => m.includes('"refused"'))).toBe(true);
  });
});
