// A config patch that widens security, tried the ways a requester (or a model acting for one)
// would try to get it through: approving it themselves, through a non-owner approver, on a
// single-owner install, or by racing a file edit while the card waits.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import { loadConfig } from '../../src/config/index.js';
import { ConfigAdmin } from '../../src/control/config-admin.js';
import { DeciderGuards } from '../../src/control/decider-guards.js';
import { LiveConfig } from '../../src/control/live-config.js';
import { ConfigReloader } from '../../src/control/reloader.js';
import { buildTurnContext } from '../../src/turn/turn-context.js';
import { openWardenStore } from '../../src/app/migrations.js';

const OWNERS = (ids: string[]) => `owners: { discord: [${ids.map((i) => `"${i}"`).join(', ')}] }\napprovals: { approvers: { discord: ["1", "2", "9"] } }\n`;

async function setup(ownerIds: string[]) {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-widen-'));
  const file = path.join(dir, 'warden.config.yaml');
  writeFileSync(file, `${OWNERS(ownerIds)}tools: { profile: coding }\n`);
  const loaded = loadConfig({ file, env: {} });
  if (!loaded.ok) throw loaded.error;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const live = new LiveConfig(loaded.value, readFileSync(file, 'utf8'));
  const approvals = new ApprovalService({ store: opened.store, config: { get owners() { return live.current().loaded.config.owners; }, get approvals() { return live.current().loaded.config.approvals; } } });
  const guards = new DeciderGuards();
  const reloader = new ConfigReloader(live, { check: () => [], swap: () => {}, restart: async () => [], notifyOwners: async () => {} });
  const admin = new ConfigAdmin({ live, reloader, approvals, guards, audit: approvals.audit, env: {}, providers: () => ['discord'] });
  // The chat decision path: the guards first, then the service's approver check.
  const decide = async (id: string, userId: string, decision = 'allow-once') => guards.refusal(id, { provider: 'discord', userId, via: { kind: 'typed' } }) ?? approvals.resolve(id, decision, { provider: 'discord', userId, via: { kind: 'typed' } });
  const turn = (sender: string) => buildTurnContext(live.current().loaded.config, { agentId: 'main', conversation: { provider: 'discord', chat: 'dm', channelId: `dm-${sender}` }, sender: { id: sender } });
  const waitForCard = async () => {
    // The first patch of a process loads the widening judge and the config editor before its card.
    await expect.poll(async () => (await approvals.list()).length, { timeout: 15_000 }).toBeGreaterThan(0);
    return (await approvals.list())[0]!;
  };
  const close = async () => {
    approvals.shutdown();
    await opened.store.close();
  };
  return { file, admin, approvals, decide, turn, waitForCard, close };
}

const WIDEN = { tools: { exec: { security: 'full' } } };

describe('a widening config patch', () => {
  it('cannot be approved by the owner who asked, nor by an approver who is no owner; another owner can', async () => {
    const s = await setup(['1', '2']);
    const outcome = s.admin.patch(WIDEN, s.turn('1'), 'agent:main:discord:direct:1');
    const card = await s.waitForCard();
    expect(card.channelId).toBeUndefined();
    expect(await s.decide(card.id, '1')).toContain('cannot approve');
    expect(await s.decide(card.id, '9')).toContain('not an owner');
    expect(await s.approvals.list()).toHaveLength(1);
    expect(readFileSync(s.file, 'utf8')).not.toContain('full');
    const decided = await s.decide(card.id, '2');
    expect(decided).toMatchObject({ kind: 'resolved' });
    await expect(outcome).resolves.toMatchObject({ kind: 'applied', approvedBy: 'discord:2' });
    expect(readFileSync(s.file, 'utf8')).toContain('security: full');
    await s.close();
  });

  it('is refused at once on a single-owner install, with what to do instead', async () => {
    const s = await setup(['1']);
    const outcome = await s.admin.patch(WIDEN, s.turn('1'), 'agent:main:discord:direct:1');
    expect(outcome).toMatchObject({ kind: 'refused' });
    expect(outcome.kind === 'refused' && outcome.reason).toContain('make the change in the config file on the host');
    expect(await s.approvals.list()).toHaveLength(0);
    await s.close();
  });

  it('is refused when the file changed while the card waited', async () => {
    const s = await setup(['1', '2']);
    const outcome = s.admin.patch(WIDEN, s.turn('1'), 'agent:main:discord:direct:1');
    const card = await s.waitForCard();
    writeFileSync(s.file, `${readFileSync(s.file, 'utf8')}# edited meanwhile\n`);
    await s.decide(card.id, '2');
    await expect(outcome).resolves.toMatchObject({ kind: 'refused', reason: expect.stringContaining('changed while the approval was pending') });
    expect(readFileSync(s.file, 'utf8')).not.toContain('security: full');
    await s.close();
  });

  it('a denied or narrowing patch needs nobody; a denial by the other owner writes nothing', async () => {
    const s = await setup(['1', '2']);
    await expect(s.admin.patch({ tools: { deny: ['exec'] } }, s.turn('1'), 'k')).resolves.toMatchObject({ kind: 'applied', approvedBy: undefined });
    const outcome = s.admin.patch({ owners: { discord: ['1', '2', '3'] } }, s.turn('1'), 'k');
    const card = await s.waitForCard();
    await s.decide(card.id, '2', 'deny');
    await expect(outcome).resolves.toMatchObject({ kind: 'refused' });
    expect(readFileSync(s.file, 'utf8')).not.toContain('"3"');
    await s.close();
  });
});
