import path from 'node:path';
import { approversFor } from '../approvals/approvers.js';
import type { WardenConfig } from '../config/schema/index.js';
import { withWebLocalOwner } from '../gateway/approval-clicks.js';
import type { TurnContext } from '../policy/context.js';
import { knownAgentIds } from '../policy/steps.js';
import { resolveToolSurface } from '../policy/surface.js';
import { surfaceInputs } from './surface-inputs.js';
import { buildTurnContext } from '../turn/turn-context.js';
import { isPathPattern } from '../exec/allowlist.js';
import { agentWorkspace, effectiveExecConfig } from '../exec/check.js';
import { buildSafeBinPolicy, isInterpreterLikeSafeBin, writableTrustedDirs } from '../exec/safe-bins.js';
import { BWRAP_PATH } from '../exec/sandbox.js';
import { wardenStatePaths } from '../exec/warden-state.js';
import type { AuditFinding } from '../config/audit-finding.js';
import { isWithinOrEqual } from '../util/path-within.js';

// Each feature's audit sits beside what it reads and returns this shape; this one reads them all.
export type { AuditFinding } from '../config/audit-finding.js';

export interface ExecAuditEnv {
  hasBwrap: boolean;
  /** Where Warden keeps its own state; an agent workspace must not contain any of it. */
  state?: {
    /** Directory relative config paths resolve against. */
    baseDir: string;
    dataDir: string;
    configFile?: string | undefined;
  };
}

/** The exec-related findings for a config. Reads only directory modes of the trusted dirs. */
export function auditExec(config: WardenConfig, env: ExecAuditEnv): AuditFinding[] {
  const exec = effectiveExecConfig(config);
  const findings: AuditFinding[] = [];
  const inputs = surfaceInputs(config, env.state?.baseDir ?? process.cwd());

  // security may be set per agent: each agent's effective policy is judged where that agent answers.
  const reachable = groupContexts(config).filter(
    (ctx) => effectiveExecConfig(config, ctx.agentId).security === 'full' && resolveToolSurface(config, ctx, inputs).tools.includes('exec'),
  );
  if (reachable.length > 0) {
    const where = reachable.map(describeContext).slice(0, 5).join(', ');
    const agents = [...new Set(reachable.map((ctx) => ctx.agentId))];
    const keys = agents.map((id) => (config.agents.list.find((a) => a.id === id)?.tools?.exec?.security ? `agents.${id}.tools.exec.security` : 'tools.exec.security'));
    findings.push({
      id: 'exec.security-full-in-groups',
      severity: 'critical',
      message: `${[...new Set(keys)].join(', ')} is full and exec is reachable from group channels (${where}${reachable.length > 5 ? ', …' : ''}): anyone there can make the bot run any command`,
      fix: 'set security: allowlist (with ask: on-miss), or deny exec in those guild/channel tools policies',
    });
  }

  const canAsk = exec.security !== 'deny' && exec.ask !== 'off' && (exec.security === 'allowlist' || exec.ask === 'always' || exec.strictInlineEval);
  if (canAsk) {
    // Decided as the running approval service decides: the web chat's local user approves on web.
    const deciding = withWebLocalOwner(config);
    const providers = configuredProviders(config).filter((p) => approversFor({ owners: deciding.owners, approvers: deciding.approvals.approvers }, p).length === 0);
    if (providers.length > 0) {
      findings.push({
        id: 'approvals.no-approvers',
        severity: 'critical',
        message: `exec asks for approval but nobody may approve on ${providers.join(', ')}: every request expires and falls back to askFallback (${exec.askFallback})`,
        fix: providers.map((p) => `set approvals.approvers.${p} (or owners.${p}) to platform user ids`).join('; '),
      });
    }
  }

  const bins = exec.safeBins ?? [];
  for (const bin of bins) {
    if (isInterpreterLikeSafeBin(bin) && exec.safeBinProfiles[bin] === undefined) {
      findings.push({
        id: 'exec.safe-bin-interpreter',
        severity: 'warn',
        message: `tools.exec.safeBins lists "${bin}", an interpreter, without a profile: it is ignored as a safe bin, and with a loose profile it would run arbitrary code`,
        fix: `remove "${bin}" from tools.exec.safeBins; allowlist specific scripts instead`,
      });
    }
  }

  const policy = buildSafeBinPolicy({ safeBins: exec.safeBins, trustedDirs: exec.safeBinTrustedDirs, profiles: exec.safeBinProfiles });
  for (const { dir, mode } of writableTrustedDirs(policy.trustedDirs)) {
    findings.push({
      id: 'exec.trusted-dir-writable',
      severity: 'warn',
      message: `safe-bin trusted dir ${dir} is group- or world-writable (mode ${mode}): anyone who can write there can plant a "safe" bin`,
      fix: `chmod go-w ${dir}, or remove it from tools.exec.safeBinTrustedDirs`,
    });
  }

  if (exec.host === 'gateway' && env.hasBwrap) {
    findings.push({
      id: 'exec.gateway-with-bubblewrap',
      severity: 'info',
      message: `tools.exec.host is gateway although bubblewrap is installed: commands run on the host with Warden's file access`,
      fix: 'set tools.exec.host: sandbox (or remove the key: sandbox is the default when bubblewrap exists)',
    });
  }
  if (!env.hasBwrap && exec.security !== 'deny') {
    findings.push({
      id: exec.host === 'sandbox' ? 'exec.sandbox-unavailable' : 'exec.no-bubblewrap',
      severity: 'warn',
      message:
        exec.host === 'sandbox'
          ? `tools.exec.host is sandbox but bubblewrap (${BWRAP_PATH}) is not installed: exec is unavailable`
          : `bubblewrap (${BWRAP_PATH}) is not installed: commands run on the host`,
      fix: 'install bubblewrap (Debian: apt-get install bubblewrap)',
    });
  }
  if (env.state) {
    // The file tools and exec may write anywhere in a workspace: a workspace holding the
    // database or the config lets the agent grant itself approvals or loosen its own policy.
    const { baseDir, dataDir, configFile } = env.state;
    const own = wardenStatePaths({ dataDir, configFile, baseDir });
    for (const agentId of knownAgentIds(config)) {
      const workspace = agentWorkspace(config, agentId, baseDir);
      const inside = own.filter((o) => isWithinOrEqual(o.at, workspace));
      if (inside.length === 0) continue;
      findings.push({
        id: 'workspace.contains-warden-state',
        severity: 'critical',
        message: `the workspace of agent ${agentId} (${workspace}) contains ${inside.map((o) => o.what).join(' and ')}: its file tools and commands can read secrets and rewrite Warden's own policy and grants`,
        fix: `give agent ${agentId} a workspace of its own (agents.defaults.workspace or agents.list[].workspace) outside Warden's directory, e.g. ./workspace`,
      });
    }
  }

  // A path pattern is matched against the executable's resolved absolute path (as in OpenClaw),
  // so `./deploy.sh` or `bin/tool` never matches anything: the operator meant something else.
  for (const [key, entries] of allowlistsOf(config)) {
    entries.forEach((entry, i) => {
      if (!isPathPattern(entry.pattern) || entry.pattern.startsWith('/') || entry.pattern.startsWith('~')) return;
      findings.push({
        id: 'exec.allowlist-relative-pattern',
        severity: 'warn',
        message: `${key}[${i}].pattern "${entry.pattern}" is a relative path: patterns are matched against the executable's resolved absolute path, so this entry never matches`,
        fix: `write the absolute path (outside the agent's workspace: a script the agent can rewrite should ask), e.g. "${path.resolve('/opt/scripts', entry.pattern)}"`,
      });
    });
  }

  if (exec.security === 'allowlist' && exec.allowlist.some((e) => e.pattern === '*' && !e.argPattern)) {
    findings.push({
      id: 'exec.allowlist-wildcard',
      severity: 'warn',
      message: 'tools.exec.allowlist has a bare "*" entry: every resolvable command runs without approval',
      fix: 'list the executables the agent needs instead of "*"',
    });
  }
  return findings;
}

/** Every configured exec allowlist with its key path: the global one and each agent's. */
function allowlistsOf(config: WardenConfig): Array<[string, ReadonlyArray<{ pattern: string }>]> {
  const lists: Array<[string, ReadonlyArray<{ pattern: string }>]> = [['tools.exec.allowlist', config.tools.exec?.allowlist ?? []]];
  config.agents.list.forEach((agent, i) => {
    const own = agent.tools?.exec?.allowlist;
    if (own) lists.push([`agents.list[${i}].tools.exec.allowlist`, own]);
  });
  return lists;
}

function configuredProviders(config: WardenConfig): string[] {
  const providers = ['web'];
  if (config.channels.discord) providers.push('discord');
  if (config.channels.slack) providers.push('slack');
  return providers;
}

/** One context per agent and configured guild/channel scope, plus a catch-all per platform. */
function groupContexts(config: WardenConfig): TurnContext[] {
  const scopes: Array<Pick<TurnContext, 'provider' | 'guildId' | 'channelId' | 'channelName'>> = [];
  const discord = config.channels.discord;
  if (discord) {
    scopes.push({ provider: 'discord', guildId: 'any-guild', channelId: 'any-channel' });
    for (const [guild, scope] of Object.entries(discord.guilds)) {
      const guildId = guild === '*' ? 'any-guild' : guild;
      scopes.push({ provider: 'discord', guildId, channelId: 'any-channel' });
      for (const channel of Object.keys(scope.channels)) {
        const name = channel.replace(/^#/, '');
        scopes.push({ provider: 'discord', guildId, channelId: /^\d+$/.test(name) ? name : 'any-channel', channelName: /^\d+$/.test(name) ? undefined : name === '*' ? 'any-channel' : name });
      }
    }
  }
  const slack = config.channels.slack;
  if (slack) {
    scopes.push({ provider: 'slack', channelId: 'CANY', channelName: 'any-channel' });
    for (const channel of Object.keys(slack.channels)) {
      const name = channel.replace(/^#/, '');
      const isId = /^[CG][A-Z0-9]+$/.test(name);
      scopes.push({ provider: 'slack', channelId: isId ? name : 'CANY', channelName: isId ? undefined : name === '*' ? 'any-channel' : name });
    }
  }
  return knownAgentIds(config).flatMap((agentId) =>
    // Built like a live turn's context (the agent's model, the sandbox step), for a non-owner.
    scopes.map((scope) => buildTurnContext(config, { agentId, conversation: { chat: 'channel', ...scope }, sender: {} })),
  );
}

function describeContext(ctx: TurnContext): string {
  const where = ctx.channelName ? `#${ctx.channelName}` : ctx.channelId;
  return `${ctx.provider}${ctx.guildId ? ` guild ${ctx.guildId}` : ''} ${where} (agent ${ctx.agentId})`;
}
