/**
 * The ids MCP tools get on the surface: `<server>__<tool>`, made provider-safe the way OpenClaw
 * makes them (its `agent-bundle-mcp-names`): every character outside `A-Z a-z 0-9 _ -` becomes
 * `-`, a fragment that does not start with a letter gets a prefix (`mcp-` for servers, `tool-`
 * for tools), server names are cut to 30 characters and ids to 64, and a name already taken —
 * case-insensitively — gets `-2`, `-3`, … Server names are assigned in declaration order, so
 * adding a server never renames an earlier one.
 *
 * Warden lower-cases the result: every tool id is compared lower-cased (policies, hook
 * matchers, the model's calls), so `GitHub__Create_Issue` and `github__create_issue` are one
 * name. The server keeps receiving its own spelling of the tool name. Pure.
 */

const SAFE = /[^A-Za-z0-9_-]/g;
export const MAX_SERVER_CHARS = 30;
export const MAX_ID_CHARS = 64;
/** What separates the server from the tool in an id. */
export const SEPARATOR = '__';

function fragment(raw: string, fallback: string, maxChars?: number): string {
  const cleaned = raw.trim().replace(SAFE, '-') || fallback;
  const safe = /^[A-Za-z]/.test(cleaned) ? cleaned : `${fallback}-${cleaned}`;
  return (maxChars !== undefined ? safe.slice(0, maxChars) : safe).toLowerCase();
}

/** Safe names for the declared servers, in declaration order (a later duplicate gets `-2`). */
export function assignServerNames(declared: readonly string[]): Map<string, string> {
  const used = new Set<string>();
  const out = new Map<string, string>();
  for (const name of declared) {
    const base = fragment(name, 'mcp', MAX_SERVER_CHARS);
    let candidate = base;
    for (let n = 2; used.has(candidate); n++) {
      const suffix = `-${n}`;
      candidate = `${base.slice(0, Math.max(1, MAX_SERVER_CHARS - suffix.length))}${suffix}`;
    }
    used.add(candidate);
    out.set(name, candidate);
  }
  return out;
}

/**
 * The id of one tool of a server (`server` already safe): `<server>__<tool>`, cut to 64
 * characters, suffixed until it is not in `reserved` (which the caller then extends).
 */
export function toolId(server: string, tool: string, reserved: ReadonlySet<string>): string {
  const cleaned = fragment(tool, 'tool');
  const max = Math.max(1, MAX_ID_CHARS - server.length - SEPARATOR.length);
  const cut = cleaned.slice(0, max) || 'tool';
  let candidate = `${server}${SEPARATOR}${cut}`;
  for (let n = 2; reserved.has(candidate); n++) {
    const suffix = `-${n}`;
    candidate = `${server}${SEPARATOR}${cut.slice(0, Math.max(1, max - suffix.length))}${suffix}`;
  }
  return candidate;
}

/** The placeholder id `/tools` shows for a server whose tools are not known yet: `<server>__*`. */
export const placeholderId = (server: string): string => `${server}${SEPARATOR}*`;
