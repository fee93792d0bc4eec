import { chmodSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ApprovalService } from '../approvals/service.js';
import type { ApprovalRequestContext } from '../approvals/types.js';
import { DEFAULT_CONFIG_FILE, configEnv, type ConfigProblem } from '../config/index.js';
import { configSecrets, redactChanges, redactConfig, redactKnown } from '../redact/redact.js';
import { log } from '../log/log.js';
import type { TurnContext } from '../policy/context.js';
import { senderIsOwner } from '../turn/turn-context.js';
import type { AuditLog } from '../store/audit.js';
import type { ToolMeta } from '../tools/types.js';
import { dotted } from './config-diff.js';
import type { DeciderGuards } from './decider-guards.js';
import { hashText, type LiveConfig } from './live-config.js';
import type { ApplyOutcome, ConfigReloader } from './reloader.js';
// The file editor, the schema walker and the widening judge load at the first patch: a running
// Warden that is never patched does not hold them.
import type { Widening } from './widening.js';

/**
 * The config as the owner's tools may show it: every credential hidden (see redact/redact.ts),
 * the values of the environment variables `*Env` keys name included.
 */
export function redactSecrets(value: unknown, env: NodeJS.ProcessEnv = process.env): unknown {
  return redactConfig(value, { env });
}

export type PatchOutcome =
  | { kind: 'applied'; changed: string[]; widening: Widening[]; approvedBy?: string | undefined; file: string; version: number; failed: string[]; restartNeeded: string[] }
  | { kind: 'unchanged' }
  | { kind: 'invalid'; problems: ConfigProblem[] }
  | { kind: 'refused'; reason: string; widening: Widening[] };

export interface ConfigAdminDeps {
  live: LiveConfig;
  reloader: ConfigReloader;
  approvals: ApprovalService;
  guards: DeciderGuards;
  audit: AuditLog;
  env?: NodeJS.ProcessEnv | undefined;
  /** Providers whose adapters run (an owner elsewhere could not see the card). */
  providers: () => readonly string[];
  plugins?: (() => readonly ToolMeta[]) | undefined;
  /** Graceful stop, then a new process with the same arguments. */
  restart?: (() => void) | undefined;
  /** How long a widening change waits for another owner (the approval service caps tool approvals at 600 s). */
  approvalTimeoutMs?: number | undefined;
}

/**
 * The owner's config administration behind the `gateway` tool: read (secrets redacted), the
 * schema under a path, patches (validated, written into the file keeping its comments,
 * applied to new turns), reload and restart. A patch that widens security waits for an owner
 * other than the one whose turn asked.
 */
export class ConfigAdmin {
  constructor(private readonly deps: ConfigAdminDeps) {}

  /** The config new turns run under. */
  config() {
    return this.deps.live.current().loaded.config;
  }

  get(dotted?: string): { ok: true; value: unknown } | { ok: false; error: string } {
    let value: unknown = redactSecrets(this.deps.live.current().loaded.config, this.env());
    for (const part of (dotted ?? '').split('.').filter(Boolean)) {
      if (!value || typeof value !== 'object' || !Object.hasOwn(value, part)) return { ok: false, error: `config.get: no key "${dotted}"` };
      value = (value as Record<string, unknown>)[part];
    }
    return { ok: true, value: value ?? null };
  }

  private env(): NodeJS.ProcessEnv {
    return this.deps.env ?? process.env;
  }

  async schema(dotted?: string) {
    const { configSchemaAt } = await import('../config/edit/schema-at.js');
    return configSchemaAt(dotted ?? '');
  }

  status() {
    const snap = this.deps.live.current();
    return { file: snap.loaded.file ?? null, version: snap.version, appliedAt: new Date(snap.appliedAt).toISOString() };
  }

  reload(): Promise<ApplyOutcome | { ok: true; unchanged: true }> {
    return this.deps.reloader.reloadFile('reload');
  }

  restart(): { ok: boolean; message: string } {
    if (!this.deps.restart) return { ok: false, message: 'restart is only available in a running `warden start`' };
    // After this turn: the graceful stop waits for running turns, this one included.
    setImmediate(() => this.deps.restart!());
    return { ok: true, message: 'Warden restarts once running turns finish (as on SIGTERM), then starts again with the same arguments.' };
  }

  /**
   * A JSON merge patch from an owner's turn. Validated with key paths, classified, approved by
   * another owner when it widens security, written into the file (comments kept), audited as
   * old → new with who approved, and applied to new turns.
   */
  async patch(patch: unknown, turn: TurnContext, sessionKey: string, signal?: AbortSignal): Promise<PatchOutcome> {
    const { live } = this.deps;
    const current = live.current().loaded;
    const file = current.file ?? path.resolve(current.baseDir, DEFAULT_CONFIG_FILE);
    const requester = `${turn.provider}:${turn.senderId ?? ''}`;
    const { classifyConfigChange, environmentReferences } = await import('./widening.js');
    const prepared = await this.prepare(file, patch);
    if (prepared.kind !== 'ready') {
      // The model and the audit row see the problems as any config is shown: redacted.
      const problems = redactProblems(prepared.problems, patch, this.env());
      await this.deps.audit.recordOrLog({ type: 'config.patch.invalid', actor: requester, sessionKey, data: { file, problems } });
      return { kind: 'invalid', problems };
    }
    const runtime = this.deps.reloader.problems(prepared.loaded.config);
    if (runtime.length > 0) return { kind: 'invalid', problems: redactProblems(runtime, prepared.loaded.config, this.env()) };
    const { changes, widening: found } = await classifyConfigChange(current.config, prepared.loaded.config, { plugins: this.deps.plugins?.() ?? [], baseDir: current.baseDir, env: this.deps.env });
    if (changes.length === 0) return { kind: 'unchanged' };
    // A `${NAME}` the patch writes is judged apart: the substituted configs hide where a value came from.
    let widening = [...found, ...environmentReferences(patch)];
    // What the card, the audit row and the model see: every side redacted, and the reasons too
    // (a widening names allowlist patterns and hosts, which may carry a credential).
    const diff = redactChanges(changes, current.config, prepared.loaded.config, dotted, { env: this.env() });
    const secrets = [...configSecrets(current.config, { env: this.env() }), ...configSecrets(prepared.loaded.config, { env: this.env() })];
    widening = widening.map((w) => ({ path: redactKnown(w.path, secrets), why: redactKnown(w.why, secrets) }));

    let approvedBy: string | undefined;
    if (widening.length > 0) {
      const decided = await this.askAnotherOwner(turn, sessionKey, widening, diff, signal);
      if (decided.kind === 'refused') {
        await this.deps.audit.recordOrLog({ type: 'config.patch.refused', actor: requester, sessionKey, data: { file, reason: decided.reason, widening, changes: diff } });
        return { kind: 'refused', reason: decided.reason, widening };
      }
      approvedBy = decided.by;
    }
    // The file may have changed while the card waited, or while the change was classified (that
    // takes a moment): it must still be the text that was judged and approved.
    const again = await this.prepare(file, patch);
    if (again.kind !== 'ready' || again.before !== prepared.before) {
      const reason = `the config file changed while the ${widening.length > 0 ? 'approval was pending' : 'change was checked'}; nothing was written. Ask again.`;
      await this.deps.audit.recordOrLog({ type: 'config.patch.refused', actor: requester, sessionKey, data: { file, reason, widening } });
      return { kind: 'refused', reason, widening };
    }

    // The watcher will see this write: it is ours, and applied just below.
    live.noteText(prepared.text);
    writeAtomically(file, prepared.text);
    await this.deps.audit.recordOrLog({ type: 'config.patched', actor: requester, sessionKey, data: { file, changes: diff, widening, approvedBy: approvedBy ?? null } });
    const applied = await this.deps.reloader.apply(prepared.loaded, { origin: 'patch', by: requester, approvedBy, text: prepared.text });
    if (!applied.ok) return { kind: 'invalid', problems: applied.problems };
    return { kind: 'applied', changed: applied.changed, widening, approvedBy, file, version: applied.version, failed: applied.failed, restartNeeded: applied.restartNeeded };
  }

  private async prepare(file: string, patch: unknown) {
    const { patchConfigText } = await import('../config/edit/config-file.js');
    let before = '';
    if (existsSync(file)) {
      try {
        before = readFileSync(file, 'utf8');
      } catch (err) {
        return { kind: 'invalid' as const, problems: [{ path: '', message: `cannot read ${file}: ${(err as Error).message}` }] };
      }
    }
    const result = patchConfigText(file, before, patch, configEnv(file, { env: this.deps.env }));
    if (!result.ok) return { kind: 'invalid' as const, problems: result.problems };
    return { kind: 'ready' as const, before: hashText(before), text: result.text, loaded: result.loaded };
  }

  /**
   * The card for a widening change: sent to the approvers' DMs (it names no channel), decided
   * only by an owner who is not the requester. Without such an owner on a running platform it
   * is refused at once with what to do instead.
   */
  private async askAnotherOwner(
    turn: TurnContext,
    sessionKey: string,
    widening: Widening[],
    diff: Array<{ path: string; before: unknown; after: unknown }>,
    signal?: AbortSignal,
  ): Promise<{ kind: 'approved'; by: string } | { kind: 'refused'; reason: string }> {
    const config = this.deps.live.current().loaded.config;
    const isRequester = (provider: string, userId: string) => provider === turn.provider && userId === turn.senderId;
    // Cards render on the requester's platform, in its approvers' DMs: the other owner must be there.
    const owners = turn.provider === 'web' ? ['local', ...(config.owners.web ?? [])] : ((config.owners as Record<string, string[] | undefined>)[turn.provider] ?? []);
    const others = this.deps.providers().includes(turn.provider) ? owners.filter((id) => !isRequester(turn.provider, id)) : [];
    const what = widening.map((w) => `${w.path}: ${w.why}`).join('; ');
    if (others.length === 0) {
      return {
        kind: 'refused',
        reason:
          `This change widens security (${what}) and needs an owner other than you to approve it, but owners.${turn.provider} names no other owner. ` +
          'Add a second owner, or make the change in the config file on the host yourself: Warden reloads it.',
      };
    }
    const context: ApprovalRequestContext = { agentId: turn.agentId, sessionKey, provider: turn.provider, requesterId: turn.senderId };
    const request = await this.deps.approvals.open(
      {
        kind: 'tool',
        tool: 'gateway',
        title: 'Config change that widens security',
        preview: what.length > 300 ? `${what.slice(0, 300)}…` : what,
        fullText: diff.map((d) => `${d.path}: ${JSON.stringify(d.before)} → ${JSON.stringify(d.after)}`).join('\n'),
        facts: [
          { label: 'Requested by', value: `${turn.provider}:${turn.senderId ?? '(unknown)'}` },
          { label: 'Who may decide', value: 'an owner other than the requester' },
          ...widening.slice(0, 6).map((w) => ({ label: 'Widens', value: `${w.path} — ${w.why}` })),
        ],
        allowedDecisions: ['allow-once', 'deny'],
        timeoutMs: this.deps.approvalTimeoutMs ?? 600_000,
      },
      { ...context, channelId: undefined, threadId: undefined },
    );
    const off = this.deps.guards.add(request.id, (by) => {
      if (isRequester(by.provider, by.userId)) return 'the owner who asked for a change that widens security cannot approve it: another owner must';
      if (!senderIsOwner(config, by.provider, by.userId)) return `${by.provider} user ${by.userId} is not an owner; only an owner other than the requester may approve this change`;
      return undefined;
    });
    try {
      const resolution = await this.deps.approvals.wait(request.id, signal);
      if (resolution.outcome === 'allow-once' || resolution.outcome === 'allow-always') return { kind: 'approved', by: resolution.decidedBy ?? 'unknown' };
      return { kind: 'refused', reason: `the change was not approved (${resolution.outcome}${resolution.decidedBy ? ` by ${resolution.decidedBy}` : ''}); nothing was written` };
    } finally {
      off();
    }
  }
}

/** Problems as audited: a message may quote the value it refused, which may be a credential of the patch. */
function redactProblems(problems: ConfigProblem[], patch: unknown, env: NodeJS.ProcessEnv): ConfigProblem[] {
  const secrets = configSecrets(patch, { env });
  return problems.map((p) => ({ ...p, message: redactKnown(p.message, secrets) }));
}

/** Writes next to the file and renames over it, keeping its mode: a reader never sees half a file. */
function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  const mode = existsSync(file) ? statSync(file).mode & 0o777 : 0o600;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, file);
  log.info({ file }, 'config file written');
}

