import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startUpstreams, type Upstreams } from '../../../../test/fakes/egress/upstreams.js';
import { ApprovalService } from '../../../approvals/service.js';
import type { ApprovalDecision, ApprovalRequest } from '../../../approvals/types.js';
import { openWardenStore } from '../../../app/migrations.js';
import { parseConfig } from '../../../config/index.js';
import type { EgressDecision } from '../../../exec/egress/proxy.js';
import { ProcessRegistry } from '../../../exec/process-registry.js';
import { bwrapAvailable, sandboxNode } from '../../../exec/sandbox.js';
import { log } from '../../../log/log.js';
import { registerServer } from '../../../net/index.js';
import { AuditLog } from '../../../store/audit.js';
import type { Store } from '../../../store/index.js';
import type { ToolCallContext, ToolResult } from '../../types.js';
import { createExecTool, type ExecToolDeps } from './exec.js';

/**
 * The exec tool with tools.exec.sandbox.network (issue: egress by allowlist through Warden's
 * proxy): real bubblewrap, real curl and git, a real git http-backend and an npm-like registry
 * on a loopback alias that allowCidrs names, the real approval service deciding cards.
 */
const up = await startUpstreams().catch((err: unknown) => ({ skip: `upstreams did not start: ${(err as Error).message}` }));
const skip = !bwrapAvailable() ? 'bubblewrap is not installed' : !sandboxNode() ? 'no node in a system directory' : 'skip' in up ? up.skip : undefined;
if (skip && process.env.CI) console.warn(`sandbox egress tests skipped: ${skip}`);
const upstreams = up as Upstreams;

let root: string;
let workspace: string;
let store: Store;
let shown: ApprovalRequest[];
let decisions: ApprovalDecision[];
let counted: EgressDecision[];
const services: ApprovalService[] = [];
const registry = new ProcessRegistry();
/** A listener of "Warden's own" (as the web chat would be), on loopback. */
const own = http.createServer((_req, res) => res.end('warden internals\n'));

beforeAll(async () => {
  await new Promise<void>((r) => own.listen(0, '127.0.0.1', () => r()));
  registerServer(own, 'web chat');
});
afterAll(async () => {
  own.close();
  if (!skip) await upstreams.close();
});
beforeEach(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'warden-exec-net-'));
  workspace = path.join(root, 'workspace');
  mkdirSync(workspace);
  const opened = await openWardenStore({ dataDir: path.join(root, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  store = opened.store;
  shown = [];
  decisions = [];
  counted = [];
});
afterEach(async () => {
  for (const job of registry.running()) job.killNow();
  for (const s of services.splice(0)) s.shutdown();
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

function setup(network: Record<string, unknown>, over: Partial<ExecToolDeps> = {}) {
  const parsed = parseConfig({
    owners: { web: ['op'] },
    tools: { exec: { host: 'sandbox', security: 'full', ask: 'off', strictInlineEval: false, sandbox: { network: { allowCidrs: [upstreams.cidr], ...network } } } },
  });
  if (!parsed.ok) throw parsed.error;
  const config = parsed.value.config;
  const approvals = new ApprovalService({ store, config, pollMs: 20 });
  services.push(approvals);
  approvals.registerRenderer({
    provider: 'web',
    show: async (request) => {
      shown.push(request);
      const decision = decisions.shift();
      if (decision) setTimeout(() => void approvals.resolveAsOperator(request.id, decision, 'tester'), 10);
    },
    update: async () => {},
  });
  const exec = createExecTool({ config, registry, hasBwrap: true, killGraceMs: 200, resolve: upstreams.resolve, onEgressDecision: (d) => counted.push(d), audit: new AuditLog(store.db), ...over });
  const ctx: ToolCallContext = {
    toolCallId: 'call-1',
    signal: new AbortController().signal,
    turn: { agentId: 'main', provider: 'web', chat: 'channel', channelId: 'dev', channelName: 'dev', senderId: 'u1', senderIsOwner: false, spawnDepth: 0 },
    sessionKey: 'agent:main:web:channel:dev',
    workspaceDir: workspace,
    log,
    approvals: approvals.requester({ agentId: 'main', sessionKey: 'agent:main:web:channel:dev', provider: 'web', channelId: 'dev' }),
  };
  return async (command: string) => (await exec.execute({ command, yieldMs: 60_000 }, ctx)) as ToolResult;
}

const textOf = (r: ToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
const hostsOf = (r: ToolResult) => ((r.details as { network?: { hosts: Array<Record<string, unknown>> } }).network?.hosts ?? []);

describe.skipIf(skip !== undefined)('a sandboxed command on the network (tools.exec.sandbox.network)', () => {
  it('allow: [git.test]: `git clone http://git.test/repo.git` succeeds, and the record names the host and the bytes', async () => {
    const run = setup({ mode: 'allowlist', allow: ['git.test'] });
    const result = await run('git clone -q http://git.test/repo.git && cat repo/README.md');
    expect(textOf(result)).toContain('egress test repository');
    expect(result.isError).toBeFalsy();
    expect(readFileSync(path.join(workspace, 'repo', 'README.md'), 'utf8')).toBe('egress test repository\n');
    const [git] = hostsOf(result);
    expect(git).toMatchObject({ host: 'git.test', port: 80, decision: 'allowed' });
    expect(git!.bytesDown as number).toBeGreaterThan(100);
    expect(git!.bytesUp as number).toBeGreaterThan(0);
    expect(shown).toEqual([]);
    expect(counted.every((d) => d === 'allowed')).toBe(true);
    // The audit row, written once the proxy closed.
    const audit = new AuditLog(store.db);
    let rows = await audit.list({ typePrefix: 'exec.network' });
    for (let i = 0; i < 50 && rows.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      rows = await audit.list({ typePrefix: 'exec.network' });
    }
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor: 'web:u1', sessionKey: 'agent:main:web:channel:dev' });
    expect(JSON.stringify(rows[0]!.data)).toContain('"host":"git.test"');
  }, 60_000);

  it('an npm-like registry on the allowlist answers; a name off it is refused with the reason, no card (ask off)', async () => {
    const run = setup({ mode: 'allowlist', allow: ['registry.test'] });
    const result = await run('curl -sS http://registry.test/left-pad; echo; curl -sS http://other.test/');
    expect(textOf(result)).toContain('"latest":"1.3.0"');
    expect(textOf(result)).toContain('Warden sandbox egress refused other.test:80: other.test:80 is not on tools.exec.sandbox.network.allow');
    expect(shown).toEqual([]);
    expect(counted).toEqual(['allowed', 'refused']);
  }, 60_000);

  it('ask: on-miss: `curl http://other.test/` raises a card; deny fails it with the decision, allow once lets it through', async () => {
    const run = setup({ mode: 'allowlist', allow: ['git.test'], ask: 'on-miss' });
    decisions.push('deny');
    const denied = await run('curl -sS -f http://other.test/ || echo "curl failed: $?"');
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatchObject({ kind: 'exec', title: 'network: other.test:80 for `curl -sS -f http://other.test/ || echo "curl failed: $?"`', preview: 'other.test:80', allowedDecisions: ['allow-once', 'deny'] });
    // The card's risk is the network decision's, not the exec catalog's "runs a command on the host".
    expect(shown[0]!.facts.filter((f) => f.label === 'Risk')).toEqual([{ label: 'Risk', value: 'allowing lets data leave this machine for other.test:80: `curl -sS -f http://other.test/ || echo "curl faile…` may send it anything it can read, the workspace included' }]);
    expect(textOf(denied)).toContain('curl failed: 22');
    expect(hostsOf(denied)).toMatchObject([{ host: 'other.test', decision: 'asked-denied' }]);
    decisions.push('deny');
    const deniedVerbose = await run('curl -sS http://other.test/');
    // The same command text again is a new command: a new card (decisions are per command).
    expect(shown).toHaveLength(2);
    expect(textOf(deniedVerbose)).toContain('other.test:80 was denied on the approval card');

    decisions.push('allow-once');
    const allowed = await run('curl -sS http://other.test/a; curl -sS http://other.test/b');
    expect(shown).toHaveLength(3);
    expect(textOf(allowed)).toBe('hello from other.test\nhello from other.test\n\n(exit code 0)');
    expect(hostsOf(allowed)).toMatchObject([{ host: 'other.test', decision: 'asked-allowed', connections: 2 }]);
    expect(counted).toEqual(expect.arrayContaining(['asked-denied', 'asked-allowed']));
  }, 60_000);

  it.each([
    ['the control plane applies it', { ok: true as const }, 'allowed on the card and added to the allowlist'],
    ['the control plane refuses it (widening not approved): this command only', { ok: false as const, why: 'another owner must approve' }, 'allowed for this command on the card'],
  ])('Allow always hands "other.test" to the control plane: %s', async (_what, answer, reason) => {
    const asked: string[] = [];
    const run = setup({ mode: 'allowlist', allow: ['git.test'], ask: 'on-miss' }, { addNetworkAllow: async (entry) => (asked.push(entry), answer) });
    decisions.push('allow-always');
    const result = await run('curl -sS http://other.test/');
    expect(shown[0]!.allowedDecisions).toEqual(['allow-once', 'allow-always', 'deny']);
    expect(shown[0]!.facts).toEqual(expect.arrayContaining([{ label: 'Allow always', value: 'adds "other.test" to tools.exec.sandbox.network.allow (a config change through the control plane)' }]));
    expect(asked).toEqual(['other.test']);
    expect(textOf(result)).toContain('hello from other.test');
    expect(hostsOf(result)).toMatchObject([{ host: 'other.test', decision: 'asked-allowed', reason }]);
  }, 60_000);

  it('metadata, Warden\'s own listener and a name resolving to a private address are refused without a card (ask: on-miss, mode open)', async () => {
    const run = setup({ mode: 'open', ask: 'on-miss', allow: [] });
    const port = (own.address() as { port: number }).port;
    const result = await run(`curl -sS http://169.254.169.254/latest/meta-data/; curl -sS http://127.0.0.1:${port}/; curl -sS http://private.test/; curl -sS http://[::ffff:169.254.169.254]/; curl -sS http://2130706433:${port}/`);
    const text = textOf(result);
    expect(text).toContain('refused 169.254.169.254:80: cloud metadata endpoint');
    expect(text).toContain(`refused 127.0.0.1:${port}`);
    expect(text).toContain("Warden's own web chat");
    expect(text).toContain('refused private.test:80: private.test resolves to blocked address 10.255.0.7');
    expect(text).not.toContain('warden internals');
    expect(shown).toEqual([]);
    expect(counted.every((d) => d === 'refused')).toBe(true);
  }, 60_000);

  it('a program that ignores the proxy variables has no route out', async () => {
    const run = setup({ mode: 'allowlist', allow: ['git.test'] });
    const a = upstreams.address;
    const result = await run(
      [
        `curl -sS --noproxy '*' --max-time 5 http://${a}/no-route ; echo "curl=$?"`,
        `curl -sS --noproxy '*' --max-time 5 http://198.18.0.1/ ; echo "curl2=$?"`,
        `bash -c 'exec 3<>/dev/tcp/${a}/80' ; echo "devtcp=$?"`,
        `node -e "require('net').connect(80, '${a}').on('error', e => { console.log('node=' + e.code); }).on('connect', () => console.log('node=connected'))"`,
        `cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '`,
      ].join('; '),
    );
    const text = textOf(result);
    expect(text).toContain('curl=7');
    expect(text).toMatch(/curl2=(7|28)/);
    expect(text).toMatch(/devtcp=1/);
    expect(text).toMatch(/node=(ECONNREFUSED|ENETUNREACH)/);
    expect(text).not.toContain('node=connected');
    expect(text).not.toContain('hello from');
    // The namespace has one interface: its own loopback.
    expect(text).toMatch(/\nlo\n/);
    expect(upstreams.seen.filter((s) => s.url === '/no-route')).toEqual([]);
    expect(existsSync(path.join(workspace, 'x'))).toBe(false);
  }, 60_000);
});
