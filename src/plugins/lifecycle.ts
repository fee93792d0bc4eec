import type { Db } from '../store/db.js';
import type { WardenConfig } from '../config/schema/index.js';
import { CronJobs, type CronJob } from '../cron/jobs.js';
import type { HookBus } from '../hooks/bus.js';
import type { CronChangedEvent, SkillChangedEvent } from '../hooks/types.js';
import { knownAgentIds } from '../policy/steps.js';
import type { SkillRootOptions } from '../skills/roots.js';
import { takeSkillSnapshot } from '../skills/snapshot.js';

/**
 * Where Warden's lifecycle meets the observer hooks that have no single call site of their own:
 * cron_changed (every change of the job store and every run) and skill_changed (what a skills
 * refresh found created, updated or removed). Observers only: what they do changes nothing here.
 */

const jobView = (job: CronJob): NonNullable<CronChangedEvent['job']> => ({
  id: job.id,
  agentId: job.agentId,
  name: job.name,
  enabled: job.enabled,
  message: job.message,
  schedule: job.schedule,
  createdBy: job.createdBy,
});

/** The cron job store, telling cron_changed about each change and run. */
export class HookedCronJobs extends CronJobs {
  constructor(
    db: Db,
    private readonly hooks: HookBus,
    options: ConstructorParameters<typeof CronJobs>[1] = {},
  ) {
    super(db, options);
  }

  private emit(event: CronChangedEvent): void {
    if (this.hooks.has('cron_changed')) this.hooks.fire('cron_changed', event, {});
  }

  override async add(input: Parameters<CronJobs['add']>[0], now: number): Promise<CronJob> {
    const job = await super.add(input, now);
    this.emit({ action: 'added', jobId: job.id, job: jobView(job), agentId: job.agentId });
    return job;
  }

  override async rename(id: string, name: string): Promise<void> {
    await super.rename(id, name);
    const job = await this.get(id);
    if (job) this.emit({ action: 'updated', jobId: id, job: jobView(job), agentId: job.agentId });
  }

  override async remove(id: string): Promise<boolean> {
    const job = await this.get(id);
    const removed = await super.remove(id);
    if (removed) this.emit({ action: 'removed', jobId: id, ...(job ? { agentId: job.agentId } : {}) });
    return removed;
  }

  override async update(id: string, patch: Parameters<CronJobs['update']>[1], now: number): Promise<CronJob | undefined> {
    const job = await super.update(id, patch, now);
    if (job) this.emit({ action: 'updated', jobId: id, job: jobView(job), agentId: job.agentId });
    return job;
  }

  override async start(runId: number, jobId: string, now: number): Promise<void> {
    await super.start(runId, jobId, now);
    const job = await this.get(jobId);
    this.emit({ action: 'started', jobId, ...(job ? { job: jobView(job), agentId: job.agentId } : {}), runId: String(runId) });
  }

  override async finish(runId: number, jobId: string, status: 'ok' | 'error' | 'interrupted', detail: string | undefined, now: number): Promise<void> {
    await super.finish(runId, jobId, status, detail, now);
    this.emit({ action: 'finished', jobId, status, runId: String(runId), ...(status === 'error' && detail ? { error: detail } : {}) });
  }
}

type SkillState = NonNullable<SkillChangedEvent['after']> & { hash: string };

/** Every skill of every agent, by SKILL.md path. */
function skillStates(config: WardenConfig, options: SkillRootOptions): Map<string, SkillState> {
  const out = new Map<string, SkillState>();
  for (const agentId of knownAgentIds(config)) {
    const snapshot = takeSkillSnapshot(config, agentId, options);
    if (!snapshot.ok) continue;
    for (const s of [...snapshot.value.eligible, ...snapshot.value.ineligible]) {
      if (out.has(s.location)) continue;
      out.set(s.location, { name: s.name, description: s.description, skillFile: s.location, skillDir: s.baseDir, source: s.root.source, hash: s.contentHash });
    }
  }
  return out;
}

/**
 * Compares the skills before and after each refresh and tells skill_changed about each created,
 * updated (its SKILL.md changed) and removed skill. Returns the function to call on a refresh.
 */
export function skillChangeReporter(hooks: HookBus, config: () => WardenConfig, options: SkillRootOptions): () => void {
  let before = hooks.has('skill_changed') ? skillStates(config(), options) : new Map<string, SkillState>();
  return () => {
    if (!hooks.has('skill_changed')) return;
    const after = skillStates(config(), options);
    const occurredAt = new Date().toISOString();
    const view = ({ hash: _h, ...rest }: SkillState) => rest;
    const emit = (event: SkillChangedEvent) => hooks.fire('skill_changed', event, { workspaceDir: options.baseDir });
    for (const [file, now] of after) {
      const was = before.get(file);
      if (!was) emit({ action: 'created', source: now.source, occurredAt, after: view(now) });
      else if (was.hash !== now.hash || was.name !== now.name || was.description !== now.description) emit({ action: 'updated', source: now.source, occurredAt, before: view(was), after: view(now) });
    }
    for (const [file, was] of before) if (!after.has(file)) emit({ action: 'removed', source: was.source, occurredAt, before: view(was) });
    before = after;
  };
}
