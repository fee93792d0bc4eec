import { readFileSync } from 'node:fs';
import { formatProblems, loadConfig, type ConfigProblem, type LoadedConfig, type WardenConfig } from '../config/index.js';
import { log } from '../log/log.js';
import type { AuditLog } from '../store/audit.js';
import type { ToolMeta } from '../tools/types.js';
import { configSecrets, redactChanges, redactKnown } from '../redact/redact.js';
import { dotted } from './config-diff.js';
import type { LiveConfig } from './live-config.js';
// The widening judge loads at the first reload: a Warden whose config never changes does not hold it.
import type { Widening } from './widening.js';

/** What a running Warden does around a reload; startup wires each piece. */
export interface ReloadHooks {
  /** Problems a running Warden finds beyond the schema (the web chat's bind and token). */
  check(config: WardenConfig): ConfigProblem[];
  /**
   * Loads what the new config needs before `swap` builds it (the turn loop's modules when the
   * config gains a model): `swap` is synchronous, so a running turn never sees half a swap.
   */
  prepare?: ((next: WardenConfig) => Promise<void>) | undefined;
  /** Builds everything the new config derives and swaps it in at once. */
  swap(next: LoadedConfig, previous: LoadedConfig): void;
  /** Restarts the adapters and listeners whose own block changed; resolves with what failed. */
  restart(next: WardenConfig, previous: WardenConfig): Promise<string[]>;
  /** A direct message to every owner on the running platforms. */
  notifyOwners(text: string, config: WardenConfig): Promise<void>;
  audit?: AuditLog | undefined;
  plugins?: (() => readonly ToolMeta[]) | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** After each change applied, whatever its origin (`warden start` prints it). */
  onApplied?: ((outcome: Extract<ApplyOutcome, { ok: true }>) => void) | undefined;
}

export type ApplyOutcome =
  | { ok: true; version: number; changed: string[]; widening: Widening[]; failed: string[]; restartNeeded: string[] }
  | { ok: false; problems: ConfigProblem[] };

export interface ApplyMeta {
  origin: 'file' | 'patch' | 'reload';
  by?: string | undefined;
  approvedBy?: string | undefined;
  /** The file text the config was read from (or written as), so the watcher skips our own write. */
  text?: string | undefined;
}

/** Keys a running Warden cannot switch: they apply at the next start. */
const RESTART_ONLY = ['dataDir', 'store'];
/** Keys read once at start (queue bounds, the watcher's own settings): applied, effective at the next start. */
const READ_AT_START: readonly string[][] = [['sessions'], ['gateway', 'reload']];

/**
 * Applies a new config to a running Warden: new turns get it, running turns finish under the
 * old one, adapters and listeners restart only when their own block changed. One apply at a
 * time; an invalid config changes nothing.
 */
export class ConfigReloader {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly live: LiveConfig,
    private readonly hooks: ReloadHooks,
  ) {}

  private env(): NodeJS.ProcessEnv {
    return this.hooks.env ?? process.env;
  }

  /** What a running Warden refuses in `config` beyond the schema (checked before a patch is written). */
  problems(config: WardenConfig): ConfigProblem[] {
    return this.hooks.check(config);
  }

  apply(next: LoadedConfig, meta: ApplyMeta): Promise<ApplyOutcome> {
    const run = this.chain.then(() => this.applyNow(next, meta));
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Reads the config file again and applies it. From the watcher (`origin: file`), an invalid
   * file is refused, the old config keeps serving, and the owners are told by DM with the key
   * paths. The file text the running config came from is skipped.
   */
  async reloadFile(origin: 'file' | 'reload'): Promise<ApplyOutcome | { ok: true; unchanged: true }> {
    const { file } = this.live.current().loaded;
    if (!file) return { ok: false, problems: [{ path: '', message: 'Warden runs without a config file; there is nothing to reload' }] };
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      return { ok: false, problems: [{ path: '', message: `cannot read ${file}: ${(err as Error).message}` }] };
    }
    if (origin === 'file' && this.live.isCurrentText(text)) return { ok: true, unchanged: true };
    const loaded = loadConfig({ file, env: this.hooks.env });
    if (!loaded.ok) {
      // A refused value may be a credential the file holds: the messages are shown redacted (logs, audit, DMs).
      const secrets = configSecrets(this.live.current().loaded.config, { env: this.env() });
      const problems = loaded.error.problems.map((p) => ({ ...p, message: redactKnown(p.message, secrets) }));
      log.error({ file, problems }, 'config change refused; the running config stays');
      await this.hooks.audit?.recordOrLog({ type: 'config.reload.refused', data: { file, origin, problems } });
      if (origin === 'file') {
        const text = `Warden did not apply the edit to ${file}: ${formatProblems(undefined, problems).replace(/^invalid config: /, '')}\nThe previous config keeps serving; fix the file and save it again.`;
        await this.hooks.notifyOwners(text, this.live.current().loaded.config).catch((err: unknown) => log.warn({ err }, 'owners could not be told about the refused config'));
      }
      return { ok: false, problems };
    }
    return this.apply(loaded.value, { origin, text });
  }

  private async applyNow(next: LoadedConfig, meta: ApplyMeta): Promise<ApplyOutcome> {
    const previous = this.live.current().loaded;
    const secrets = () => [...configSecrets(previous.config, { env: this.env() }), ...configSecrets(next.config, { env: this.env() })];
    const checked = this.hooks.check(next.config);
    const problems = checked.length > 0 ? checked.map((p) => ({ ...p, message: redactKnown(p.message, secrets()) })) : checked;
    if (problems.length > 0) {
      log.error({ problems }, 'config change refused; the running config stays');
      if (meta.origin === 'file') await this.hooks.notifyOwners(`Warden did not apply the edit to ${next.file}: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}. The previous config keeps serving.`, previous.config).catch(() => undefined);
      return { ok: false, problems };
    }
    const { classifyConfigChange } = await import('./widening.js');
    const classified = await classifyConfigChange(previous.config, next.config, { plugins: this.hooks.plugins?.() ?? [], baseDir: previous.baseDir, env: this.hooks.env });
    const { changes } = classified;
    if (changes.length === 0) {
      if (meta.text !== undefined) this.live.noteText(meta.text);
      return { ok: true, version: this.live.current().version, changed: [], widening: [], failed: [], restartNeeded: [] };
    }
    const restartNeeded = [
      ...RESTART_ONLY.filter((k) => changes.some((c) => c.path[0] === k)),
      ...READ_AT_START.filter((p) => changes.some((c) => p.every((k, i) => c.path[i] === k))).map((p) => p.join('.')),
    ];
    // dataDir and the store stay as the store was opened; the rest applies now.
    const applied: LoadedConfig = { ...next, config: { ...next.config, dataDir: previous.config.dataDir, store: previous.config.store } };
    await this.hooks.prepare?.(applied.config);
    this.hooks.swap(applied, previous);
    const snapshot = this.live.replace(applied, meta.text);
    // Logged, audited and returned as every other path shows config: redacted (a restart error may quote a URL).
    const known = secrets();
    const failed = (await this.hooks.restart(applied.config, previous.config).catch((err: unknown) => [(err as Error).message])).map((m) => redactKnown(m, known));
    const changed = changes.map((c) => dotted(c.path));
    const widening = classified.widening.map((w) => ({ path: redactKnown(w.path, known), why: redactKnown(w.why, known) }));
    const level = widening.length > 0 ? 'warn' : 'info';
    log[level]({ version: snapshot.version, origin: meta.origin, changed, widening, failed, restartNeeded, by: meta.by, approvedBy: meta.approvedBy }, 'config reloaded');
    await this.hooks.audit?.recordOrLog({
      type: 'config.applied',
      actor: meta.by,
      data: {
        version: snapshot.version,
        origin: meta.origin,
        file: next.file,
        approvedBy: meta.approvedBy,
        changes: redactChanges(changes, previous.config, next.config, dotted, { env: this.env(), secrets: known }),
        widening,
        failed,
        restartNeeded,
      },
    });
    const outcome = { ok: true as const, version: snapshot.version, changed, widening, failed, restartNeeded };
    this.hooks.onApplied?.(outcome);
    return outcome;
  }
}
