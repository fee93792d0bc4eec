import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import type { ApprovalRenderer, ApprovalRequest } from '../../src/approvals/types.js';
import { parseConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { Transcripts } from '../../src/store/transcript.js';

const CHILD = fileURLToPath(new URL('./fixtures/approval-child.ts', import.meta.url));
const children: ResultPromise[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** Starts a real Node process running the fixture and waits for its first line. */
async function spawnChild(dataDir: string, timeouts: number[]) {
  const child = execa(process.execPath, ['--import', 'tsx', CHILD, dataDir, timeouts.join(',')], { reject: false, buffer: true, lines: false });
  children.push(child);
  const first = await new Promise<{ pid: number; ids: string[] }>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const nl = text.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(text.slice(0, nl)) as { pid: number; ids: string[] });
    });
    void child.then((r) => reject(new Error(`child exited early: ${r.stderr}`)));
  });
  return { child, ...first };
}

class Cards implements ApprovalRenderer {
  readonly provider = 'discord';
  shown: ApprovalRequest[] = [];
  updated: ApprovalRequest[] = [];
  async show(r: ApprovalRequest) {
    this.shown.push(r);
  }
  async update(r: ApprovalRequest) {
    this.updated.push(r);
  }
}

describe('approvals survive a restart', () => {
  it('a killed process leaves requests that recover as expired or interrupted; a live waiter is re-armed and still gets its decision', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'warden-restart-'));
    // Process B stays alive, waiting on its request.
    const b = await spawnChild(dataDir, [600_000]);
    // Process A: one request that will be past expiry by restart time, one that will not; it is
    // killed before its own expiry timer could close the first.
    const a = await spawnChild(dataDir, [2000, 600_000]);
    a.child.kill('SIGKILL');
    const killed = await a.child;
    expect(killed.signal).toBe('SIGKILL');
    await new Promise((r) => setTimeout(r, 2100));

    const parsed = parseConfig({ owners: { discord: ['owner-1'] } });
    if (!parsed.ok) throw parsed.error;
    const opened = await openWardenStore({ dataDir });
    if (!opened.ok) throw new Error(opened.error.message);
    const bus = new EventBus();
    const reported: Array<{ id: string; session: string; message: string }> = [];
    bus.on('approval.interrupted', ({ request, message }) => reported.push({ id: request.id, session: request.sessionKey, message }));
    const approvals = new ApprovalService({ store: opened.store, config: parsed.value.config, events: bus });
    const cards = new Cards();
    approvals.registerRenderer(cards);

    const report = await approvals.recover();
    const [expiredId, orphanId] = a.ids;
    const [waitedId] = b.ids;
    expect(report.expired.map((r) => r.id)).toEqual([expiredId]);
    expect(report.interrupted.map((r) => r.id)).toEqual([orphanId]);
    expect(report.rearmed.map((r) => r.id)).toEqual([waitedId]);

    // Nothing vanished: every request is in the ledger with a state.
    const states = Object.fromEntries(await Promise.all([...a.ids, ...b.ids].map(async (id) => [id, (await approvals.get(id))?.status])));
    expect(states).toEqual({ [expiredId!]: 'expired', [orphanId!]: 'interrupted', [waitedId!]: 'pending' });
    expect(cards.updated.map((r) => [r.id, r.status]).sort()).toEqual([[expiredId, 'expired'], [orphanId, 'interrupted']].sort());
    expect(cards.shown.map((r) => r.id)).toEqual([waitedId]);

    // The dead call's session hears about it, in the transcript and on the bus.
    const session = `agent:main:discord:channel:c${a.pid}`;
    expect(reported).toEqual([{ id: orphanId, session, message: expect.stringContaining('The tool call did not run.') }]);
    expect((await new Transcripts(opened.store.db).list(session)).at(-1)).toMatchObject({ role: 'system', details: { approvalId: orphanId, outcome: 'interrupted' } });

    // The re-armed request still reaches the process waiting for it.
    const resolved = await approvals.resolve(waitedId!, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    expect(resolved.kind).toBe('resolved');
    const done = await b.child;
    expect(done.exitCode).toBe(0);
    const last = JSON.parse(String(done.stdout).trim().split('\n').at(-1)!) as { resolution: { outcome: string; decidedBy: string } };
    expect(last.resolution).toMatchObject({ outcome: 'allow-once', decidedBy: 'discord:owner-1' });

    const audit = (await approvals.audit.list({ typePrefix: 'approval.' })).map((e) => `${e.type}:${e.subject}`);
    expect(audit).toEqual(expect.arrayContaining([`approval.expired:${expiredId}`, `approval.interrupted:${orphanId}`, `approval.resolved:${waitedId}`]));
    approvals.shutdown();
    await opened.store.close();
  });
});
