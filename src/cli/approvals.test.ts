import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApprovalService } from '../approvals/service.js';
import { parseConfig } from '../config/index.js';
import { main } from '../cli.js';
import { EventBus } from '../events/events.js';
import { ExecAllowlistStore } from '../exec/allowlist-store.js';
import { openWardenStore } from '../app/migrations.js';
import type { CliIO } from './args.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** A config folder for the CLI and a running service on the same store. */
async function setup() {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-approvals-cli-'));
  writeFileSync(path.join(dir, 'warden.config.yaml'), 'owners: { discord: ["1"] }\n');
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const parsed = parseConfig({ owners: { discord: ['1'] } });
  if (!parsed.ok) throw parsed.error;
  const approvals = new ApprovalService({ store: opened.store, config: parsed.value.config, events: new EventBus(), pollMs: 10 });
  const ctx = { agentId: 'main', sessionKey: 'agent:main:discord:channel:42', provider: 'discord' };
  closers.push(async () => {
    approvals.shutdown();
    await opened.store.close();
  });
  return { dir, approvals, ctx, db: opened.store.db };
}

async function cli(dir: string, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: (t) => void (stdout += `${t}\n`), stderr: (t) => void (stderr += `${t}\n`), cwd: dir, env: {} };
  const code = await main(['approvals', ...argv], io);
  return { code, stdout, stderr };
}

const INPUT = { kind: 'tool' as const, tool: 'write', title: 'Write notes', preview: 'notes.txt', fullText: '{}', grant: { pattern: 'write' } };

describe('warden approvals', () => {
  it('lists pending requests and resolves one; the waiting call (another connection) hears it', async () => {
    const t = await setup();
    const waiting = t.approvals.request(INPUT, t.ctx);
    const id = await vi.waitFor(async () => {
      const [pending] = await t.approvals.list();
      expect(pending).toBeDefined();
      return pending!.id;
    });
    const list = await cli(t.dir, ['list', '--json']);
    expect(JSON.parse(list.stdout).pending.map((r: { id: string }) => r.id)).toEqual([id]);

    const resolved = await cli(t.dir, ['resolve', id, 'always']);
    expect(resolved.code).toBe(0);
    expect(resolved.stdout).toMatch(new RegExp(`resolved ${id}: allow-always by cli:\\S+ \\(grant g_`));
    expect((await waiting).outcome).toBe('allow-always');

    const again = await cli(t.dir, ['resolve', id, 'deny']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`already resolved ${id}: allow-always by cli:`);

    const history = await cli(t.dir, ['history', '--json']);
    expect(JSON.parse(history.stdout).history[0]).toMatchObject({ id, status: 'allow-always' });

    const grants = JSON.parse((await cli(t.dir, ['grants', '--json'])).stdout).grants as Array<{ id: string }>;
    expect(grants).toHaveLength(1);
    const revoked = await cli(t.dir, ['revoke', grants[0]!.id]);
    expect(revoked.stdout).toContain(`revoked ${grants[0]!.id}`);
    expect(JSON.parse((await cli(t.dir, ['grants', '--json'])).stdout).grants).toEqual([]);
    expect(JSON.parse((await cli(t.dir, ['grants', '--all', '--json'])).stdout).grants).toHaveLength(1);
  });

  it.each([
    [['resolve', 'nope', 'deny'], 'no approval with id nope'],
    [['revoke', 'g_nope'], 'no grant with id g_nope'],
    [['resolve', 'only-id'], 'usage: warden approvals resolve ID allow-once|allow-always|deny'],
    [['lst'], 'unknown subcommand "lst" (did you mean "list"?)'],
    [[], 'missing subcommand'],
  ])('%j → exit 2 with a clear message', async (argv, message) => {
    const t = await setup();
    const { code, stderr } = await cli(t.dir, argv);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it('refuses a decision the request does not offer', async () => {
    const t = await setup();
    const request = await t.approvals.open({ ...INPUT, allowedDecisions: ['allow-once', 'deny'] }, t.ctx);
    const { code, stderr } = await cli(t.dir, ['resolve', request.id, 'allow-always']);
    expect(code).toBe(2);
    expect(stderr).toContain(`decision "allow-always" is not offered by ${request.id}; allowed: allow-once, deny`);
    expect((await t.approvals.get(request.id))!.status).toBe('pending');
  });

  it('lists exec allow-always grants with the tool grants, and revokes one by id', async () => {
    const t = await setup();
    const exec = new ExecAllowlistStore(t.db);
    const live = await exec.add('main', { pattern: '/usr/bin/rm', argPattern: '^-rf\x00build/\x00$', source: 'allow-always', lastUsedCommand: 'rm -rf build/' });
    const old = await exec.add('main', { pattern: '/usr/bin/make', argPattern: '^\x00\x00$', source: 'allow-always', expiresAt: 1000 });
    await exec.add('main', { pattern: '/usr/bin/ls', source: 'import' });

    const human = await cli(t.dir, ['grants']);
    expect(human.stdout).toBe(`${live.id}  agent main  exec on gateway  /usr/bin/rm  for "rm -rf build/"  bound to no file  no expiry\n`);
    const all = JSON.parse((await cli(t.dir, ['grants', '--all', '--json'])).stdout);
    expect(all.exec.map((e: { id: string }) => e.id)).toEqual([live.id, old.id]);
    expect((await cli(t.dir, ['grants', '--all'])).stdout).toContain(`${old.id}  agent main  exec on gateway  /usr/bin/make  args "^\\u0000\\u0000$"  bound to no file  expired 1970-01-01T00:00:01.000Z`);

    const revoked = await cli(t.dir, ['revoke', live.id]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`revoked exec grant ${live.id}`);
    expect((await exec.list('main')).map((e) => e.pattern)).toEqual(['/usr/bin/ls']);
  });
});

describe('approvals list and history lines', () => {
  it('show the command and when it was asked and decided', async () => {
    const { requestLine } = await import('./approvals.js');
    const base = { id: 'ab12', kind: 'exec' as const, tool: 'exec', title: 'Run a command', fullText: 'git push', agentId: 'main', sessionKey: 'agent:main:web:direct:local', provider: 'web', facts: [], allowedDecisions: ['allow-once' as const, 'deny' as const], createdAt: Date.UTC(2026, 0, 2, 3, 4, 5), expiresAt: Date.UTC(2026, 0, 2, 3, 9, 5) };
    expect(requestLine({ ...base, preview: 'git push\n  origin main', status: 'pending' })).toBe(
      'ab12  exec/exec  "git push origin main"  asked 2026-01-02T03:04:05.000Z  [agent:main:web:direct:local]  expires 2026-01-02T03:09:05.000Z',
    );
    expect(requestLine({ ...base, preview: 'git push', status: 'deny', decidedBy: 'web:local', decidedAt: Date.UTC(2026, 0, 2, 3, 5, 0) })).toMatch(/"git push"  asked 2026-01-02T03:04:05\.000Z  .*  deny by web:local at 2026-01-02T03:05:00\.000Z$/);
  });
});
