// A node pairs with a running Warden over loopback, runs commands under its own exec policy
// (allowed, refused, asked in the chat of the call), goes offline, and after unpairing cannot
// connect again.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../../src/approvals/types.js';
import { parseConfig, type LoadedConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import type { NodeHub } from '../../src/control/nodes/hub.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { buildTurnContext } from '../../src/turn/turn-context.js';
import { startNode } from '../../src/node/start-node.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { ExecAllowlistStore, nodeExecutor } from '../../src/exec/allowlist-store.js';
import { freshStoreTarget } from '../store-engines.js';
import { AuditLog } from '../../src/store/audit.js';
import type { ToolResult } from '../../src/tools/types.js';

let warden: RunningWarden;
let hub: NodeHub;
const events = new EventBus();
let root: string;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'warden-nodes-e2e-'));
  mkdirSync(path.join(root, 'workspace'));
  const parsed = parseConfig({ dataDir: path.join(root, 'data'), agents: { defaults: { workspace: path.join(root, 'workspace') } }, channels: { web: { port: 0 } }, gateway: { nodes: { enabled: true, port: 0 } } }, path.join(root, 'warden.config.yaml'));
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden(parsed.value, { env: {}, events, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  warden = started.warden;
  hub = warden.listeners.get<NodeHub>('node listener')!;
}, 30_000);
afterAll(async () => {
  await warden?.stop();
});

/** The node's own config: its exec policy, not the gateway's. */
function nodeConfig(ask: 'off' | 'on-miss'): LoadedConfig {
  const dir = path.join(root, 'node');
  mkdirSync(path.join(dir, 'workspace'), { recursive: true });
  const r = parseConfig({ agents: { defaults: { workspace: path.join(dir, 'workspace') } }, tools: { exec: { host: 'gateway', security: 'allowlist', ask, allowlist: [{ pattern: '/usr/bin/uname' }] } } }, path.join(dir, 'node.yaml'));
  if (!r.ok) throw r.error;
  return r.value;
}

async function launch(ask: 'off' | 'on-miss') {
  const lines: string[] = [];
  const started = await startNode({ gateway: hub.url!, name: 'build', loaded: nodeConfig(ask), stateDir: path.join(root, 'node', 'state'), say: (l) => lines.push(l), env: {} });
  if (!started.ok) throw new Error(started.error);
  return { ...started, lines, saw: (text: string) => expect.poll(() => lines.join('\n'), { timeout: 10_000 }).toContain(text) };
}

/** What the web chat's owner types, routed like any chat message. */
const type = (text: string) =>
  warden.gateway.receive({ provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'local', text, mentionsBot: true, messageId: `m${Math.random()}`, receivedAt: Date.now() });

/** The nodes tool as the owner's turn in the web chat calls it: through the whole wrapper chain. */
const nodes = (args: Record<string, unknown>): Promise<ToolResult> => {
  const turn = buildTurnContext(warden.config.live.current().loaded.config, { agentId: 'main', conversation: { provider: 'web', chat: 'dm', channelId: 'web' }, sender: { id: 'local' } });
  return warden.tools().execute({ toolCallId: `t${Math.random()}`, tool: 'nodes', args }, { sessionKey: 'agent:main:web:direct:local', turn, signal: new AbortController().signal, surface: ['nodes'] });
};
const textOf = (r: ToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('warden node', () => {
  it('pairs with a one-time code approved in chat, then runs, refuses and asks under its own policy', async () => {
    const strict = await launch('off');
    await strict.saw('Pairing code: ');
    const code = /Pairing code: (\S+)/.exec(strict.lines.join('\n'))![1]!;
    expect(hub.pending()).toEqual([expect.objectContaining({ name: 'build', code })]);
    await type(`/nodes approve ${code}`);
    await strict.saw('Connected to');
    // The token is kept on the node (600) and only as a hash on the gateway.
    expect(statSync(path.join(root, 'node', 'state', 'node-token.json')).mode & 0o777).toBe(0o600);
    const row = (await warden.store.db.get<{ token_hash: string }>('SELECT token_hash FROM paired_nodes WHERE name = ?', ['build']))!;
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(await new AuditLog(warden.store.db).list({ typePrefix: 'node.paired' })).toEqual([expect.objectContaining({ subject: 'build', actor: 'web:local' })]);

    // Its skills are published under its name.
    const described = JSON.parse(textOf(await nodes({ action: 'describe', node: 'build' })));
    expect(described.skills.map((k: { name: string }) => k.name)).toContain('build:code-review');
    const listed = JSON.parse(textOf(await nodes({ action: 'list' })));
    expect(listed.nodes).toContainEqual(expect.objectContaining({ id: 'build', online: true }));

    const allowed = await nodes({ action: 'invoke', node: 'build', command: 'system.run', args: { command: 'uname -s' } });
    expect(allowed.isError, textOf(allowed)).toBeFalsy();
    expect(textOf(allowed)).toContain('Linux');
    const refused = await nodes({ action: 'invoke', node: 'build', command: 'system.run', args: { command: 'id -u' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/allowlist miss|not allowed|denied/i);
    const which = await nodes({ action: 'invoke', node: 'build', command: 'system.which', args: { name: 'uname' } });
    expect(textOf(which)).toMatch(/\/uname$/);
    strict.run.stop();
    await strict.close();

    // Offline: listed so, and calls fail with why.
    await expect.poll(async () => (await hub.describe('build'))?.online, { timeout: 5_000 }).toBe(false);
    const offline = await nodes({ action: 'invoke', node: 'build', command: 'system.run', args: { command: 'uname' } });
    expect(textOf(offline)).toContain('node build is offline');

    // The same node with a policy that asks: the card is in the chat of the call, and its decision runs the command.
    const asking = await launch('on-miss');
    await asking.saw('Connected to');
    const card = new Promise<ApprovalRequest>((resolve) => {
      const off = events.on('approval.requested', ({ request }) => {
        off();
        resolve(request);
      });
    });
    const pending = nodes({ action: 'invoke', node: 'build', command: 'system.run', args: { command: 'id -u' } });
    const request = await card;
    expect(request).toMatchObject({ provider: 'web', channelId: 'web', kind: 'exec' });
    expect(request.title).toContain('[node build]');
    await warden.approvals.resolve(request.id, 'allow-once', { provider: 'web', userId: 'local', via: { kind: 'typed' } });
    const ran = await pending;
    expect(ran.isError, textOf(ran)).toBeFalsy();
    expect(textOf(ran)).toMatch(/\b\d+\b/);

    // Unpaired: the connection drops at once and the token never works again.
    await type('/nodes unpair build');
    await expect(asking.run.done).resolves.toMatchObject({ ok: false });
    await asking.close();
    expect(await hub.list()).toEqual([]);
    const again = await launch('on-miss');
    await expect(again.run.done).resolves.toMatchObject({ ok: false });
    expect(again.lines.join('\n')).toContain('refused this node');
    await again.close();
  }, 60_000);

  it('a fresh node creates its workspace as warden start does, and keeps its state on the configured shared store', async () => {
    const dir = path.join(root, 'fresh');
    const workspace = path.join(dir, 'not-yet', 'workspace');
    const { url, dataDir } = await freshStoreTarget('postgres');
    const r = parseConfig(
      { agents: { defaults: { workspace } }, store: { url }, tools: { exec: { host: 'gateway', security: 'allowlist', ask: 'off', allowlist: [{ pattern: '/usr/bin/uname' }] } } },
      path.join(dir, 'node.yaml'),
    );
    if (!r.ok) throw r.error;
    // What the node allows beyond its config lives in the shared store: granted there, not on the node's disk.
    const shared = await openWardenStore({ dataDir, url });
    if (!shared.ok) throw new Error(shared.error.message);
    try {
      await new ExecAllowlistStore(shared.store.db).add('main', { pattern: '/usr/bin/id', source: 'import' });
      expect(existsSync(workspace)).toBe(false);
      const lines: string[] = [];
      const stateDir = path.join(dir, 'state');
      const node = await startNode({ gateway: hub.url!, name: 'fresh', loaded: r.value, stateDir, say: (l) => lines.push(l), env: {} });
      if (!node.ok) throw new Error(node.error);
      try {
        expect(statSync(workspace).isDirectory()).toBe(true);
        await expect.poll(() => lines.join('\n'), { timeout: 10_000 }).toContain('Pairing code: ');
        const code = /Pairing code: (\S+)/.exec(lines.join('\n'))![1]!;
        await type(`/nodes approve ${code}`);
        await expect.poll(() => lines.join('\n'), { timeout: 10_000 }).toContain('Connected to');
        // Before, a fresh node's system.run failed: "workdir … does not exist".
        const ran = await nodes({ action: 'invoke', node: 'fresh', command: 'system.run', args: { command: 'uname -s' } });
        expect(ran.isError, textOf(ran)).toBeFalsy();
        expect(textOf(ran)).toContain('Linux');
        // The gateway's entry for `id` in the shared store is the gateway's: another machine's binaries, not this node's.
        const byGateway = await nodes({ action: 'invoke', node: 'fresh', command: 'system.run', args: { command: 'id -u' } });
        expect(textOf(byGateway)).toContain('no allowlist entry');
        // `id` is allowed by the node's own entry in the shared store, under its stable id.
        await new ExecAllowlistStore(shared.store.db, Date.now, nodeExecutor(node.nodeId)).add('main', { pattern: '/usr/bin/id', source: 'import' });
        const byShared = await nodes({ action: 'invoke', node: 'fresh', command: 'system.run', args: { command: 'id -u' } });
        expect(byShared.isError, textOf(byShared)).toBeFalsy();
        expect(textOf(byShared)).toMatch(/\b\d+\b/);
        // No SQLite store of its own in the state dir: only its id and its token.
        expect(readdirSync(stateDir).sort()).toEqual(['node-id', 'node-token.json']);
      } finally {
        node.run.stop();
        await node.close();
        await type('/nodes unpair fresh');
      }
    } finally {
      await shared.store.close();
    }
  }, 60_000);

  it('refuses a plain ws:// gateway beyond loopback and wss:// without a pinned fingerprint', async () => {
    const loaded = nodeConfig('off');
    for (const gateway of ['ws://10.0.0.5:3003', 'ws://example.com:3003', 'wss://example.com:3003', 'http://127.0.0.1:3003']) {
      const r = await startNode({ gateway, name: 'x', loaded, stateDir: path.join(root, 'x'), say: () => {} });
      expect(r.ok, gateway).toBe(false);
    }
  });
});
