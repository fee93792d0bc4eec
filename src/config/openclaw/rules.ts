/**
 * OpenClaw's `tools` keys (openclaw@2026.9.6) and what Warden does with each one that it does
 * not read as written. Keys absent from this table are read by Warden's schema unchanged
 * (`profile`, `allow`, `deny`, `exec.security`, …). The "OpenClaw compatibility" table (docs/openclaw-compatibility.md)
 * says the same thing for people; a test keeps the two in step.
 *
 * Paths are relative to a tools block: `exec.timeoutSeconds`, `media.models[].profile`,
 * `byProvider.*.profile` (`*` any record key, `[]` any array item).
 */

export type RuleScope = 'global' | 'agent' | 'both';

export type CompatRule =
  /** The same setting under Warden's name: the value moves there. */
  | { kind: 'rename'; to: string }
  /** A feature Warden does not have: refused. */
  | { kind: 'unsupported'; why: string }
  /** A feature Warden does not have, accepted when the value turns it off (Warden never has it on). */
  | { kind: 'off-only'; isOff: (value: unknown) => boolean; why: string }
  /** A looser OpenClaw rule: accepted only when the value asks for what Warden always does. */
  | { kind: 'stricter'; accepts: (value: unknown) => boolean; openclaw: string; warden: string }
  /** A value written OpenClaw's way, rewritten into Warden's keys (or refused with `why`). */
  | { kind: 'translate'; apply: (value: unknown, parent: Record<string, unknown>) => TranslateOutcome };

export type TranslateOutcome =
  | { ok: true; set?: Record<string, unknown>; drop?: boolean }
  /** `key` names the inner key the refused value sits under (`fs` → `fs.workspaceOnly`). */
  | { ok: false; value: string; why: string; key?: string };

export interface CompatEntry {
  path: string;
  scope: RuleScope;
  rule: CompatRule;
}

const isFalse = (v: unknown) => v === false;
const disabledObject = (v: unknown) => v === false || (typeof v === 'object' && v !== null && (v as { enabled?: unknown }).enabled === false);
const isEmptyList = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string' && x.trim() === '');

/** OpenClaw's exec modes as the security/ask pair each one stands for (its docs' Modes table). */
export const EXEC_MODES: Readonly<Record<string, { security: string; ask: string }>> = {
  deny: { security: 'deny', ask: 'off' },
  allowlist: { security: 'allowlist', ask: 'off' },
  ask: { security: 'allowlist', ask: 'on-miss' },
  // `auto` asks a reviewer model before a human; Warden has no reviewer, so every miss asks a human.
  auto: { security: 'allowlist', ask: 'on-miss' },
  full: { security: 'full', ask: 'off' },
};

const execMode: CompatRule = {
  kind: 'translate',
  apply: (value, parent) => {
    const mode = typeof value === 'string' ? EXEC_MODES[value] : undefined;
    if (!mode) return { ok: false, value: String(value), why: `expected one of ${Object.keys(EXEC_MODES).join(', ')}` };
    if (parent.security !== undefined || parent.ask !== undefined) {
      return { ok: false, value: String(value), why: 'mode cannot be combined with security or ask in one exec block (OpenClaw refuses it too); keep one form' };
    }
    return { ok: true, set: { security: mode.security, ask: mode.ask }, drop: true };
  },
};

const execHost = (scope: 'global' | 'agent'): CompatRule => ({
  kind: 'translate',
  apply: (value) => {
    // OpenClaw's `auto` is sandbox when a sandbox is available, else the gateway: Warden's default.
    if (value === 'auto') return { ok: true, drop: true };
    if (value === 'node') return { ok: false, value: 'node', why: 'Warden runs commands in its sandbox or on the gateway host, not on paired nodes' };
    if (scope === 'agent') return { ok: false, value: String(value), why: 'Warden has one exec host for every agent: set tools.exec.host' };
    return { ok: true };
  },
});

/** `elevated.allowFrom.webchat` is Warden's web chat. */
const elevatedAllowFrom: CompatRule = {
  kind: 'translate',
  apply: (value) => {
    if (!value || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, 'webchat')) return { ok: true };
    const { webchat, ...rest } = value as Record<string, unknown>;
    const web = [...((rest.web as unknown[] | undefined) ?? []), ...((webchat as unknown[] | undefined) ?? [])];
    return { ok: true, set: { allowFrom: { ...rest, web } }, drop: true };
  },
};

/** Keyless or hosted-harness search backends Warden has no client for. */
const UNSUPPORTED_SEARCH_PROVIDERS: Readonly<Record<string, string>> = {
  codex: 'Codex Hosted Search runs a Codex app-server turn; Warden has no Codex runtime',
  'parallel-free': "Parallel's free tier is an MCP server; use provider: parallel with PARALLEL_API_KEY",
  'firecrawl-free': "Firecrawl's keyless starter tier is not offered; use provider: firecrawl with FIRECRAWL_API_KEY",
};

/**
 * `updatePlan` switched OpenClaw's plan tool (`update_plan`, now `progress_card`). Warden offers
 * `progress_card` through the tool policy; `false` keeps it off as a deny entry (nothing
 * dropped silently), `true` is refused: allow it by the policy instead.
 */
const updatePlan: CompatRule = {
  kind: 'translate',
  apply: (value, parent) => {
    if (value !== false) return { ok: false, value: String(value), why: 'progress_card is offered by the tool policy (profile coding, or allow/alsoAllow it); only false is accepted here, as a deny' };
    const deny = Array.isArray(parent.deny) ? (parent.deny as unknown[]) : [];
    return { ok: true, drop: true, set: { deny: [...deny, 'progress_card'] } };
  },
};

const searchProvider: CompatRule = {
  kind: 'translate',
  apply: (value) => {
    const why = typeof value === 'string' ? UNSUPPORTED_SEARCH_PROVIDERS[value.trim().toLowerCase()] : undefined;
    return why ? { ok: false, value: String(value), why } : { ok: true };
  },
};

const fsBlock: CompatRule = {
  kind: 'translate',
  apply: (value) => {
    const workspaceOnly = (value as { workspaceOnly?: unknown } | null)?.workspaceOnly;
    if (workspaceOnly === false) {
      return { ok: false, key: 'workspaceOnly', value: 'false', why: 'in OpenClaw it lets read, write, edit and apply_patch reach outside the workspace; Warden keeps the file tools inside the workspace always' };
    }
    return { ok: true, drop: true };
  },
};

const NO_STORED_GRANTS = 'Warden has no automation grants; allow-always grants for commands last tools.exec.allowAlwaysTtlSec';

export const OPENCLAW_TOOLS_RULES: readonly CompatEntry[] = [
  // exec
  { path: 'exec.timeoutSeconds', scope: 'both', rule: { kind: 'rename', to: 'timeoutSec' } },
  { path: 'exec.mode', scope: 'both', rule: execMode },
  { path: 'exec.host', scope: 'global', rule: execHost('global') },
  { path: 'exec.host', scope: 'agent', rule: execHost('agent') },
  { path: 'exec.node', scope: 'both', rule: { kind: 'unsupported', why: 'Warden runs commands in its sandbox or on the gateway host, not on paired nodes' } },
  { path: 'exec.reviewer', scope: 'both', rule: { kind: 'unsupported', why: 'Warden has no reviewer model: a command the allowlist does not cover asks a human' } },
  { path: 'exec.grantExpiryDays', scope: 'both', rule: { kind: 'unsupported', why: NO_STORED_GRANTS } },
  { path: 'exec.pathPrepend', scope: 'both', rule: { kind: 'unsupported', why: 'commands resolve through the trusted system directories only; add a directory with tools.exec.safeBinTrustedDirs or an allowlist entry with its full path' } },
  { path: 'exec.commandHighlighting', scope: 'both', rule: { kind: 'off-only', isOff: isFalse, why: 'approval cards show the command as plain text' } },
  { path: 'exec.notifyOnExit', scope: 'both', rule: { kind: 'off-only', isOff: isFalse, why: 'a background command does not wake the session when it exits: the model follows it with the process tool' } },
  { path: 'exec.notifyOnExitEmptySuccess', scope: 'both', rule: { kind: 'off-only', isOff: isFalse, why: 'a background command does not wake the session when it exits' } },
  { path: 'exec.approvalRunningNoticeMs', scope: 'both', rule: { kind: 'off-only', isOff: (v) => v === 0, why: 'an approved command that runs long moves to the background and the model is told; no separate chat notice is posted' } },
  { path: 'exec.applyPatch.workspaceOnly', scope: 'global', rule: { kind: 'stricter', accepts: (v) => v === true, openclaw: 'lets apply_patch write outside the workspace', warden: 'keeps apply_patch inside the workspace always' } },
  { path: 'exec.applyPatch', scope: 'agent', rule: { kind: 'unsupported', why: 'apply_patch is offered per model for every agent: set tools.exec.applyPatch' } },
  { path: 'exec.cleanupMs', scope: 'agent', rule: { kind: 'unsupported', why: 'finished background jobs are kept for one time for every agent: set tools.exec.cleanupMs' } },
  // files: Warden has no `fs` block, its file tools never leave the workspace.
  { path: 'fs', scope: 'both', rule: fsBlock },
  // web
  { path: 'web.search.timeoutSeconds', scope: 'global', rule: { kind: 'rename', to: 'timeoutSec' } },
  { path: 'web.search.provider', scope: 'global', rule: searchProvider },
  { path: 'web.search.openaiCodex', scope: 'global', rule: { kind: 'unsupported', why: "Codex's hosted search belongs to the Codex runtime, which Warden does not have" } },
  { path: 'web.fetch.timeoutSeconds', scope: 'global', rule: { kind: 'rename', to: 'timeoutSec' } },
  { path: 'web.fetch.useTrustedEnvProxy', scope: 'global', rule: { kind: 'stricter', accepts: isFalse, openclaw: 'lets an environment proxy resolve DNS instead of pinning the checked address', warden: 'resolves, checks and pins every address itself and ignores environment proxies' } },
  { path: 'web.fetch.ssrfPolicy.dangerouslyAllowPrivateNetwork', scope: 'global', rule: { kind: 'stricter', accepts: isFalse, openclaw: 'lets web_fetch reach private networks', warden: 'never lets web_fetch reach private, loopback or link-local addresses (the browser can, with browser.ssrfPolicy.allowPrivateNetwork)' } },
  { path: 'web.fetch.ssrfPolicy.allowedHostnames', scope: 'global', rule: { kind: 'stricter', accepts: isEmptyList, openclaw: 'lets web_fetch reach these hosts on private addresses', warden: 'never lets web_fetch reach private addresses, whatever the name (the browser can, with browser.ssrfPolicy.allowedHostnames)' } },
  // media understanding
  { path: 'media.models[].timeoutSeconds', scope: 'global', rule: { kind: 'rename', to: 'timeoutSec' } },
  { path: 'media.image.timeoutSeconds', scope: 'global', rule: { kind: 'rename', to: 'timeoutSec' } },
  { path: 'media.audio.timeoutSeconds', scope: 'global', rule: { kind: 'rename', to: 'timeoutSec' } },
  { path: 'media.video.timeoutSeconds', scope: 'global', rule: { kind: 'rename', to: 'timeoutSec' } },
  { path: 'media.models[].request', scope: 'global', rule: { kind: 'unsupported', why: 'provider requests use the guarded client without transport overrides' } },
  { path: 'media.image.request', scope: 'global', rule: { kind: 'unsupported', why: 'provider requests use the guarded client without transport overrides' } },
  { path: 'media.audio.request', scope: 'global', rule: { kind: 'unsupported', why: 'provider requests use the guarded client without transport overrides' } },
  { path: 'media.video.request', scope: 'global', rule: { kind: 'unsupported', why: 'provider requests use the guarded client without transport overrides' } },
  { path: 'media.image.scope', scope: 'global', rule: { kind: 'unsupported', why: 'gate media understanding per conversation with the channel tool policy instead' } },
  { path: 'media.audio.scope', scope: 'global', rule: { kind: 'unsupported', why: 'gate media understanding per conversation with the channel tool policy instead' } },
  { path: 'media.video.scope', scope: 'global', rule: { kind: 'unsupported', why: 'gate media understanding per conversation with the channel tool policy instead' } },
  { path: 'links', scope: 'global', rule: { kind: 'unsupported', why: 'links in messages are not fetched on arrival; the model uses web_fetch' } },
  // sessions and messages
  { path: 'sessions_spawn', scope: 'global', rule: { kind: 'off-only', isOff: (v) => (v as { attachments?: { enabled?: unknown } } | null)?.attachments?.enabled !== true, why: 'sessions_spawn takes no inline attachments' } },
  { path: 'message.broadcast', scope: 'both', rule: { kind: 'off-only', isOff: disabledObject, why: 'the message tool has no broadcast action' } },
  { path: 'elevated.allowFrom', scope: 'both', rule: elevatedAllowFrom },
  // runtimes Warden does not have
  { path: 'codeMode', scope: 'both', rule: { kind: 'off-only', isOff: disabledObject, why: 'there is no JavaScript code-mode runtime; tools are called directly' } },
  { path: 'swarm', scope: 'both', rule: { kind: 'off-only', isOff: disabledObject, why: 'there are no collector-mode subagents; use sessions_spawn and subagents' } },
  { path: 'updatePlan', scope: 'global', rule: updatePlan },
  { path: 'github', scope: 'both', rule: { kind: 'unsupported', why: 'there are no managed GitHub identities; commands see no GitHub credential' } },
  { path: 'sandbox', scope: 'agent', rule: { kind: 'unsupported', why: 'the sandbox tool policy is one for every agent: set tools.sandbox.tools' } },
];

/** Keys outside `tools` that OpenClaw spells differently. */
export const OPENCLAW_OTHER_RULES: readonly CompatEntry[] = [
  { path: 'skills.load.extraDirs', scope: 'global', rule: { kind: 'rename', to: 'skills.extraDirs' } },
  { path: 'skills.load.allowSymlinkTargets', scope: 'global', rule: { kind: 'unsupported', why: 'a skill folder must stay inside its root; links out are refused' } },
  { path: 'plugins.load.paths', scope: 'global', rule: { kind: 'rename', to: 'plugins.paths' } },
  { path: 'plugins.entries.*.config.webSearch', scope: 'global', rule: { kind: 'unsupported', why: 'provider keys come from the environment and web search settings from tools.web.search (providers.<id>.baseUrl, apiKeyEnv, model)' } },
];

export const COMPAT_POINTER = 'see docs/openclaw-compatibility.md';
