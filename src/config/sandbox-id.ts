/**
 * The host uid and gid of sandboxed commands when Warden runs as root and `tools.exec.sandbox`
 * names none.
 *
 * 65533 is Warden's own id, not `nobody` (65534), which daemons share and which could then
 * reach the sandbox's processes. It lies in the range Debian reserves (65000–65533, never
 * allocated to a user or package), outside systemd's dynamic users (61184–65519), and below
 * 65536, so it exists in a rootless container's user namespace too (those usually map only
 * 0–65535). Files the sandbox writes in the workspace belong to it.
 *
 * `WARDEN_SANDBOX_ID` moves that default for every config the process loads: for a host where
 * 65533 is taken, or where several independent Wardens (or test suites) run as root side by side
 * and must not count each other's sandboxes as strangers holding their id (exec/sandbox-uid.ts).
 * An id written in the config still wins.
 */
export const DEFAULT_SANDBOX_ID = 65533;
export const SANDBOX_ID_ENV = 'WARDEN_SANDBOX_ID';
/** The ids the config accepts for `tools.exec.sandbox.uid`/`gid`: never root, never the kernel's "no id". */
export const SANDBOX_ID_MIN = 1;
export const SANDBOX_ID_MAX = 4_294_967_294;

export type SandboxIdSetting = { ok: true; id: number } | { ok: false; error: string };

/** `WARDEN_SANDBOX_ID` as written (unset or blank: the built-in default). Pure. */
export function sandboxIdSetting(given: string | undefined): SandboxIdSetting {
  if (given === undefined || given.trim() === '') return { ok: true, id: DEFAULT_SANDBOX_ID };
  const t = given.trim();
  const id = /^\d{1,10}$/.test(t) ? Number(t) : NaN;
  if (!(id >= SANDBOX_ID_MIN && id <= SANDBOX_ID_MAX)) {
    return { ok: false, error: `${SANDBOX_ID_ENV}="${given}" is not a sandbox id: expected a whole number from ${SANDBOX_ID_MIN} to ${SANDBOX_ID_MAX}` };
  }
  return { ok: true, id };
}

/**
 * The default sandbox id for this process. A malformed value is refused when the config loads
 * (load.ts), before any command could run; reaching here with one is a bug, so it throws rather
 * than fall back to an id the operator did not choose.
 */
export function defaultSandboxId(env: Record<string, string | undefined> = process.env): number {
  const setting = sandboxIdSetting(env[SANDBOX_ID_ENV]);
  if (!setting.ok) throw new Error(setting.error);
  return setting.id;
}
