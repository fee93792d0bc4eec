import { realpathSync } from 'node:fs';
import path from 'node:path';
import { isPending, type ApprovalDecision, type ApprovalOutcome, type ApprovalResolution, type PendingApproval } from '../../../approvals/types.js';
import type { WardenConfig } from '../../../config/schema/index.js';
import type { ExecConfig } from '../../../config/schema/exec.js';
import { ExecAllowlistStore } from '../../../exec/allowlist-store.js';
import { effectiveExecConfig, execPolicyFromConfig } from '../../../exec/check.js';
import { commandScriptBinding, evaluateExec, verifiedCommand, type EvaluateOptions, type ExecPolicy, type ExecSecurity, type ExecVerdict } from '../../../exec/decide.js';
import { elevatedDecision } from '../../../exec/elevated.js';
import { blockedOverride, buildChildEnv, checkEnvOverrides } from '../../../exec/env.js';
import { bindingChange, CHANGED, type BoundFile } from '../../../exec/content-binding.js';
import { discoverGitConfig, needsGitListing, NOT_LISTED, withGitDiscovery, type GitDiscovery, type GitDiscoveryView } from '../../../exec/git-discovery.js';
import type { ExecJob } from '../../../exec/job.js';
import { partyOf, processRegistry as defaultRegistry, type ProcessRegistry } from '../../../exec/process-registry.js';
import { DEFAULT_PATH_DIRS } from '../../../exec/resolve.js';
import { showArgv } from '../../../exec/rewrite.js';
import { startCommand } from '../../../exec/run.js';
import { makeVerifiedCopies, type VerifiedCopies } from '../../../exec/verified-run.js';
import { sandboxReadiness } from '../../../exec/sandbox-probe.js';
import { bwrapAvailable, execHomes, resolveExecHost, sandboxIdentity, sandboxNode, type ExecHost, type SandboxIdentity } from '../../../exec/sandbox.js';
import { EgressProxy, type AskAnswer, type EgressDecision, type EgressHostRecord } from '../../../exec/egress/proxy.js';
import { configuredListeners, type Resolver } from '../../../net/index.js';
import { metrics } from '../../../ops/metrics.js';
import type { AuditLog } from '../../../store/audit.js';
import { pendingApprovalText } from '../../invoke/approval-step.js';
import type { ToolCallContext, ToolImplementation, ToolResult } from '../../types.js';
import { background } from '../../../util/background.js';
import { networkCard } from './network-card.js';
import { execParameters as parameters } from './exec-schema.js';

/**
 * The `exec` tool (reference A3, A14): judge the command, ask a human when the gate says so,
 * run it on the configured host with a minimal environment, and hand long runs to `process`.
 */
export interface ExecArgs {
  command: string;
  workdir?: string;
  env?: Record<string, string>;
  yieldMs?: number;
  background?: boolean;
  timeout?: number;
  /** Run on the gateway host instead of the sandbox, for senders in `tools.elevated.allowFrom`. */
  elevated?: boolean;
}

export interface ExecToolDeps {
  config: WardenConfig;
  /** Stored allow-always grants; without a store, allow-always is not offered. */
  allowlist?: ExecAllowlistStore | undefined;
  registry?: ProcessRegistry;
  hasBwrap?: boolean;
  parentEnv?: NodeJS.ProcessEnv;
  killGraceMs?: number;
  /** Warden's own state (data dir, config file, `.env`): masked inside the sandbox. */
  protect?: readonly string[] | undefined;
  /** Who sandboxed commands are on the host; default from `tools.exec.sandbox` and Warden's uid. */
  identity?: SandboxIdentity | undefined;
  /**
   * Called once the bound files are verified and copied, just before the command starts: the
   * last moment an agent's concurrent rewrite could matter. Tests rewrite the files here to show
   * that the command runs the verified bytes anyway.
   */
  afterVerify?: ((bound: readonly BoundFile[]) => void | Promise<void>) | undefined;
  /**
   * "Add to the allowlist" on a network card: a config patch through the control plane (its
   * widening rules apply). Absent: the card does not offer it.
   */
  addNetworkAllow?: ((entry: string, ctx: ToolCallContext) => Promise<{ ok: true } | { ok: false; why: string }>) | undefined;
  /** Name resolution for the egress proxy (tests map names to their own upstreams). */
  resolve?: Resolver | undefined;
  /** The audit log: each command that used the network leaves an `exec.network` row with its record. */
  audit?: AuditLog | undefined;
  /** Each egress decision; default: the `warden_sandbox_egress_total` counter. */
  onEgressDecision?: ((decision: EgressDecision) => void) | undefined;
}

const RANK: Record<ExecSecurity, number> = { deny: 0, allowlist: 1, full: 2 };

export function createExecTool(deps: ExecToolDeps): ToolImplementation<ExecArgs> {
  const registry = deps.registry ?? defaultRegistry;
  const global = effectiveExecConfig(deps.config);
  registry.setFinishedTtl(global.cleanupMs);
  const configuredHost: ExecHost = resolveExecHost(global.host, deps.hasBwrap ?? bwrapAvailable());
  const identity = deps.identity ?? sandboxIdentity(global.sandbox);
  const protect = deps.protect ?? [];

  return {
    id: 'exec',
    parameters,
    async execute(args, ctx) {
      // tools.elevated: one separate, fail-closed decision; when it holds, this one command runs
      // on the gateway host and must be approved on a card whatever the allowlist says.
      let elevated: string | undefined;
      if (args.elevated === true) {
        const decision = elevatedDecision(deps.config, ctx.turn, configuredHost);
        if (!decision.ok) return failure(`elevated exec refused: ${decision.why}. Run it without elevated (in the sandbox) or ask an operator.`);
        elevated = decision.who;
      }
      const host: ExecHost = elevated ? 'gateway' : configuredHost;
      if (host === 'sandbox' && !(deps.hasBwrap ?? bwrapAvailable())) {
        return failure('exec unavailable: tools.exec.host is sandbox but bubblewrap (/usr/bin/bwrap) is not installed');
      }
      const command = args.command;
      const overrides: Record<string, string> = { ...(args.env ?? {}) };
      const envCheck = checkEnvOverrides(overrides);
      if (!envCheck.ok) return failure(envCheck.error);
      // resolve_exec_env: plugin variables join after the model's, under the same refusals.
      if (ctx.resolveExecEnv) Object.assign(overrides, pluginEnv(await ctx.resolveExecEnv(host), ctx.log));
      // secrets.grants: stored secrets this command is granted, under the same refusals; the gate below sees them.
      if (ctx.secretEnv) Object.assign(overrides, pluginEnv(await ctx.secretEnv(command), ctx.log));
      const cwd = workdirInside(ctx.workspaceDir, args.workdir);
      if (!cwd.ok) return failure(cwd.error);
      if (host === 'sandbox') {
        // No isolation, no command: the sandbox host never falls back to running on the host.
        const ready = await sandboxReadiness(cwd.root, identity, protect);
        if (!ready.ok) return failure(`exec unavailable: tools.exec.host is sandbox but ${ready.error}. Nothing was run; \`warden doctor\` shows what this host supports.`);
      }

      const stored = (await deps.allowlist?.list(ctx.turn.agentId)) ?? [];
      // Policy, limits and fallbacks are the calling agent's; host and job retention are global.
      const exec = effectiveExecConfig(deps.config, ctx.turn.agentId);
      const policy = execPolicyFromConfig(exec, stored, host);
      const { home, patternHome } = execHomes(host);
      const judged: EvaluateOptions = { cwd: cwd.dir, pathDirs: DEFAULT_PATH_DIRS, home, patternHome };
      // The repository's drivers, listed as the command's git will read them (same host, user
      // and view); where that listing is blind, a command that would run unasked asks.
      const gate = readOnlyWithEnv(evaluateExec(command, policy, judged), overrides, exec.ask);
      const gitView: GitDiscoveryView = { host, workspace: cwd.root, home, overrides, identity, protect };
      let git = needsGitListing(gate) ? await discoverGitConfig(cwd.dir, gitView) : NOT_LISTED;
      const verdict = withGitDiscovery(gate, git, exec);
      ctx.log.info({ tool: 'exec', decision: verdict.decision, reason: verdict.reason, host }, 'exec verdict');

      let script: string;
      // The files the decision rested on, by content: the command must run these bytes.
      let bound: BoundFile[] | undefined;
      if (verdict.decision === 'deny') return denied(`exec denied: ${verdict.reason}`, verdict);
      if (elevated) {
        const asked = await requestApproval(command, verdict, host, cwd.dir, ctx, false, scriptsShown(command, policy, judged), git, elevated);
        if (isPending(asked)) return pendingResult(asked, command);
        const outcome = asked.outcome;
        // Only an approver's explicit allow-once runs an elevated command: no grant, no expiry fallback.
        if (outcome !== 'allow-once') return denied(`elevated exec not run: the approval was ${outcome === 'deny' ? 'denied' : outcome}. Do not retry this command.`, verdict);
        const changed = scriptsChanged(asked, command, policy, judged);
        if (changed) return denied(`elevated exec not run: ${changed}, while its approval card waited; the approver decided on other content. Ask again if it is still wanted.`, verdict);
        const relisted = needsGitListing(verdict) ? await relistAfterApproval(cwd.dir, gitView, asked) : { ok: true as const, git };
        if (!relisted.ok) return denied(`elevated exec not run: ${relisted.why}`, verdict);
        git = relisted.git;
        script = command;
        bound = shownScripts(asked);
      } else if (verdict.decision === 'allow') {
        script = verdict.rewritten ?? command;
        bound = verdict.grantBinding;
        for (const s of verdict.segments) {
          const entry = stored.find((e) => s.entry && e.pattern === s.entry.pattern && e.argPattern === s.entry.argPattern);
          if (entry) await deps.allowlist?.markUsed(entry.id, command, s.resolved);
        }
      } else {
        const asked = await requestApproval(command, verdict, host, cwd.dir, ctx, deps.allowlist !== undefined, scriptsShown(command, policy, judged), git);
        // No decision within approvals.waitSec: the turn goes on; the command runs once someone decides.
        if (isPending(asked)) return pendingResult(asked, command);
        const outcome = asked.outcome;
        // Drivers that cannot be neutralised run only on a human's word, never on a fallback.
        if (outcome === 'expired' && git.blind !== null) return denied('exec denied: approval-timeout (a command whose repository drivers cannot be neutralised never runs on a fallback). Do not retry this command.', verdict);
        const next = afterApproval(outcome, command, verdict, exec.security, exec.askFallback);
        if (!next.run) return denied(next.reason, verdict);
        // The approver decided on these scripts' content; the agent may have rewritten one while the card waited.
        const changed = outcome === 'allow-once' || outcome === 'allow-always' ? scriptsChanged(asked, command, policy, judged) : null;
        if (changed) return denied(`exec not run: ${changed}, while its approval card waited; the approver decided on other content. Ask again if it is still wanted.`, verdict);
        const relisted = needsGitListing(verdict) ? await relistAfterApproval(cwd.dir, gitView, asked) : { ok: true as const, git };
        if (!relisted.ok) return denied(`exec not run: ${relisted.why}`, verdict);
        git = relisted.git;
        if (outcome === 'allow-always' && deps.allowlist && verdict.allowAlways.offered) {
          const expiresAt = exec.allowAlwaysTtlSec !== undefined ? Date.now() + exec.allowAlwaysTtlSec * 1000 : undefined;
          for (const entry of verdict.allowAlways.entries) {
            await deps.allowlist.add(ctx.turn.agentId, { ...entry, source: 'allow-always', expiresAt, lastUsedCommand: command });
          }
        }
        script = next.script;
        if (outcome === 'allow-once' || outcome === 'allow-always') bound = shownScripts(asked);
        else if (script === verdict.fallbackScript) bound = verdict.grantBinding;
      }

      // Check, then run the same bytes: copies no one else can write, and the command rewritten to read them.
      let copies: VerifiedCopies | undefined;
      if (bound && bound.length > 0) {
        const made = makeVerifiedCopies(bound);
        if (!made.ok) return denied(`exec not run: a file it runs ${made.why}. Ask again if it is still wanted.`, verdict);
        const run = verifiedCommand(command, policy, judged, made.copies.copyOf);
        if (!run.ok) {
          made.copies.cleanup();
          return denied(`exec not run: it runs bound files, and ${run.why}.`, verdict);
        }
        script = run.script;
        copies = made.copies;
        ctx.log.info({ tool: 'exec', verified: bound.length, copies: copies.root }, 'exec runs verified copies');
        await deps.afterVerify?.(bound);
      }

      // tools.exec.sandbox.network: a proxy of this command's own is its only way out.
      let egress: EgressProxy | undefined;
      let egressNode: string | undefined;
      if (host === 'sandbox' && global.sandbox.network.mode !== 'none') {
        const node = sandboxNode();
        if (!node) {
          copies?.cleanup();
          return failure('exec unavailable: tools.exec.sandbox.network needs node in a system directory (/usr/bin/node) to run the forwarder inside the sandbox. Nothing was run.');
        }
        try {
          egress = await EgressProxy.start({
            network: global.sandbox.network,
            ownListeners: configuredListeners(deps.config),
            resolve: deps.resolve,
            ask: global.sandbox.network.ask === 'on-miss' ? (h, p) => askNetwork(h, p, command, global.sandbox.network.askTimeoutSec, ctx, deps) : undefined,
            onDecision: deps.onEgressDecision ?? ((decision) => metrics.sandboxEgress.inc({ decision })),
          });
        } catch (err) {
          copies?.cleanup();
          return failure(`exec unavailable: the sandbox's egress proxy did not start (${(err as Error).message}). Nothing was run.`);
        }
        egressNode = node;
      }

      const timeoutSec = args.timeout ?? exec.timeoutSec;
      let job: ExecJob;
      try {
        job = startCommand({
          script,
          label: command,
          host,
          workspace: cwd.root,
          cwd: cwd.dir,
          env: buildChildEnv(deps.parentEnv ?? process.env, { home, overrides, git: { workspace: cwd.root, discovered: git.neutralisations } }),
          timeoutMs: Number.isFinite(timeoutSec) && timeoutSec > 0 ? timeoutSec * 1000 : undefined,
          maxOutputChars: exec.maxOutputChars,
          killGraceMs: deps.killGraceMs,
          identity,
          protect,
          ...(copies ? { readOnly: [copies.root] } : {}),
          ...(egress && egressNode ? { egress: { socket: egress.socketPath, node: egressNode } } : {}),
        });
      } catch (err) {
        copies?.cleanup();
        if (egress) background(egress.close(), 'egress proxy not closed');
        return failure(`exec unavailable: ${(err as Error).message}. Nothing was run.`);
      }
      if (copies) void job.done.then(copies.cleanup, copies.cleanup);
      if (egress) {
        const proxy = egress;
        background(job.done.then(async () => {
          const hosts = proxy.record();
          await proxy.close();
          if (hosts.length === 0) return;
          ctx.log.info({ tool: 'exec', command, network: hosts }, 'exec network record');
          await deps.audit?.recordOrLog({ type: 'exec.network', actor: `${ctx.turn.provider}:${ctx.turn.senderId ?? ''}`, subject: job.id, sessionKey: ctx.sessionKey, data: { command, hosts } });
        }), 'exec network record not written');
      }
      // The job is the requester's, also when an approver let it run (process-registry.ts).
      const record = registry.add(partyOf(ctx), job);
      if (!record) {
        job.killNow();
        await job.done;
        return failure(`exec stopped: job id ${job.id} is already in use, so the command was stopped as soon as it started. Run it again.`);
      }
      const yieldMs = args.background ? 0 : clamp(args.yieldMs ?? exec.backgroundMs, 10, 120_000);
      const finished = await waitFor(job, yieldMs, ctx.signal);
      if (!finished) {
        if (ctx.signal.aborted) {
          job.kill();
          await job.done;
          return failure(`exec aborted: ${command}`);
        }
        record.backgrounded = true;
        job.drainPending();
        return running(job);
      }
      return withNetwork(completed(job), egress);
    },
  };
}

/** The hosts a command reached (or was refused), in its result's details: the audit row keeps them. */
function withNetwork(result: ToolResult, egress: EgressProxy | undefined): ToolResult {
  if (!egress) return result;
  const hosts: EgressHostRecord[] = egress.record();
  return { ...result, details: { ...(result.details as object), network: { hosts } } };
}

/**
 * The card for a connection to a name not on the allowlist (ask: on-miss), through the same
 * approval machinery as every exec card. Allow once: this host and port for the rest of this
 * command. Allow always: added to tools.exec.sandbox.network.allow by a config patch (the
 * control plane's widening rules apply; refused there, it stays allowed for this command only).
 */
async function askNetwork(host: string, port: number, command: string, timeoutSec: number, ctx: ToolCallContext, deps: ExecToolDeps): Promise<AskAnswer> {
  const canAdd = deps.addNetworkAllow !== undefined;
  const card = networkCard(host, port, command, canAdd);
  const entry = card.entry;
  const resolution = await ctx.approvals.request(
    {
      kind: 'exec',
      tool: 'exec',
      title: card.title,
      preview: card.preview,
      fullText: command,
      facts: card.facts,
      allowedDecisions: canAdd ? ['allow-once', 'allow-always', 'deny'] : ['allow-once', 'deny'],
      timeoutMs: timeoutSec * 1000,
    },
    ctx.signal,
  );
  if (resolution.outcome === 'allow-once') return 'allow-command';
  if (resolution.outcome !== 'allow-always' || !deps.addNetworkAllow) return 'deny';
  const added = await deps.addNetworkAllow(entry, ctx).catch((err: unknown) => ({ ok: false as const, why: (err as Error).message }));
  if (!added.ok) ctx.log.warn({ tool: 'exec', entry, why: added.why }, 'network allowlist addition refused; allowed for this command only');
  return added.ok ? 'add-to-allowlist' : 'allow-command';
}

/**
 * The default read-only list vouches for a command's options, not for an environment the model
 * chose for it (`GIT_TRACE=/path` makes git write a file): with overrides it asks.
 */
function readOnlyWithEnv(verdict: ExecVerdict, overrides: Record<string, string>, ask: ExecConfig['ask']): ExecVerdict {
  const keys = Object.keys(overrides);
  if (verdict.decision !== 'allow' || keys.length === 0 || !verdict.segments.some((s) => s.matchedBy === 'read-only')) return verdict;
  const reason = `environment overrides (${keys.join(', ')}) on a command of the default read-only list`;
  return {
    ...verdict,
    decision: ask === 'off' ? 'deny' : 'ask',
    reason: ask === 'off' ? `${reason}; tools.exec.ask is off` : reason,
    askReasons: [reason],
    allowAlways: { offered: false, why: 'the default read-only list does not cover environment overrides', entries: [] },
  };
}

function workdirInside(workspace: string, workdir: string | undefined): { ok: true; dir: string; root: string } | { ok: false; error: string } {
  const dir = path.resolve(workspace, workdir ?? '.');
  try {
    const real = realpathSync(dir);
    const root = realpathSync(workspace);
    if (real !== root && !real.startsWith(root + path.sep)) return { ok: false, error: `workdir ${workdir} is outside the workspace` };
    return { ok: true, dir: real, root };
  } catch {
    return { ok: false, error: `workdir ${workdir ?? workspace} does not exist` };
  }
}

/** What the approver's decision rests on besides the text: the scripts the command runs, by content. */
interface ScriptsShown {
  scripts: BoundFile[];
}

/** The card said the repository's drivers could not be neutralised (GitDiscovery.blind). */
interface GitShown {
  gitBlind: string;
}

function scriptsShown(command: string, policy: ExecPolicy, judged: EvaluateOptions): ScriptsShown | undefined {
  const binding = commandScriptBinding(command, policy, judged);
  return binding.ok && binding.files.length > 0 ? { scripts: binding.files } : undefined;
}

/** The scripts the card was shown for, by content; undefined when it bound none. */
function shownScripts(resolution: ApprovalResolution): BoundFile[] | undefined {
  const shown = resolution.shown as Partial<ScriptsShown> | undefined;
  return Array.isArray(shown?.scripts) && shown.scripts.length > 0 ? shown.scripts : undefined;
}

/** How the scripts differ from the ones the card was shown for; null when they do not (or none were bound). */
function scriptsChanged(resolution: ApprovalResolution, command: string, policy: ExecPolicy, judged: EvaluateOptions): string | null {
  const shown = resolution.shown as Partial<ScriptsShown> | undefined;
  if (!Array.isArray(shown?.scripts)) return null;
  const now = commandScriptBinding(command, policy, judged);
  if (!now.ok) return `the scripts it runs can no longer be checked (${now.why})`;
  const change = bindingChange(shown.scripts, now.files);
  if (change === null) return null;
  return change.startsWith(CHANGED) ? `a script it runs ${change}` : `the scripts it runs are not the ones the card showed (${change})`;
}

/**
 * The listing again once a human decided (the repository may have changed while the card
 * waited): a listing that turned blind since the card was shown was not what they approved.
 */
async function relistAfterApproval(cwd: string, view: GitDiscoveryView, resolution: ApprovalResolution): Promise<{ ok: true; git: GitDiscovery } | { ok: false; why: string }> {
  const now = await discoverGitConfig(cwd, view);
  const warned = typeof (resolution.shown as Partial<GitShown> | undefined)?.gitBlind === 'string';
  if (now.blind !== null && !warned) {
    return { ok: false, why: `the repository configuration can no longer be listed as the command will read it (${now.blind}) since its approval card was shown. Ask again if it is still wanted.` };
  }
  return { ok: true, git: now };
}

function pendingResult(pending: PendingApproval, command: string): ToolResult {
  return {
    content: [{ type: 'text', text: pendingApprovalText(pending.id, pending.expiresAt) }],
    details: { status: 'pending', approvalId: pending.id, expiresAt: pending.expiresAt, command },
  };
}

async function requestApproval(
  command: string,
  verdict: ExecVerdict,
  host: ExecHost,
  cwd: string,
  ctx: ToolCallContext,
  canPersist: boolean,
  shown: ScriptsShown | undefined,
  git: GitDiscovery,
  elevatedFor?: string,
): Promise<ApprovalResolution | PendingApproval> {
  const offerAlways = canPersist && verdict.allowAlways.offered;
  const facts = [
    { label: 'Resolved', value: verdict.segments.map((s) => s.resolved ?? `${s.argv[0] === undefined ? '?' : showArgv(s.argv.slice(0, 1))} (unresolved)`).join(', ') || '(not analysed)' },
    { label: 'Why', value: elevatedFor ? `elevated: runs outside the sandbox on the gateway host, asked for ${elevatedFor} (${verdict.reason})` : verdict.reason },
    { label: 'Runs in', value: `${cwd} (${host === 'sandbox' ? 'sandbox' : elevatedFor ? 'gateway host, ELEVATED' : 'host'})` },
  ];
  // A grant that named this command no longer covers it: say what changed, first.
  const [changed, other] = partition(verdict.changedSinceApproval, (m) => m.startsWith(CHANGED));
  if (other.length > 0) facts.unshift({ label: 'Allow-always grant', value: other.join('; ') });
  if (changed.length > 0) facts.unshift({ label: 'Changed', value: changed.join('; ') });
  const repoConfig = verdict.segments.flatMap((s) => (s.repoConfig ? [`${s.repoConfig.binary} runs ${s.repoConfig.reads}`] : []));
  if (repoConfig.length > 0) facts.push({ label: 'Repository config', value: [...new Set(repoConfig)].join('; ') });
  if (git.blind !== null) facts.push({ label: 'Repository drivers', value: `NOT neutralised: ${git.blind}; a filter, diff or merge driver the repository names runs if git reaches it` });
  const bound = verdict.allowAlways.entries.flatMap((e) => e.boundFiles ?? []);
  if (offerAlways && bound.length > 0) {
    facts.push({ label: 'Allow always binds', value: bound.map((f) => `${f.path} (${f.sha256 === null ? 'absent' : `sha256 ${f.sha256.slice(0, 12)}…`})`).join(', ') });
  }
  if (!offerAlways) facts.push({ label: 'Allow always', value: `not offered: ${elevatedFor ? 'elevated commands are approved one at a time' : canPersist ? verdict.allowAlways.why : 'no store to keep it in'}` });
  const hidden = hiddenCharacters(command);
  if (hidden) facts.unshift({ label: 'Warning', value: hidden });
  // What the approver was told about the repository's drivers comes back with the decision.
  const card = shown || git.blind !== null ? { ...shown, ...(git.blind !== null ? { gitBlind: git.blind } : {}) } : undefined;
  const decisions: ApprovalDecision[] = offerAlways ? ['allow-once', 'allow-always', 'deny'] : ['allow-once', 'deny'];
  const input = {
    kind: 'exec' as const,
    tool: 'exec',
    title: elevatedFor ? 'Run a command on the gateway host (elevated)' : changed.length > 0 ? `Run a command (${CHANGED})` : 'Run a command',
    preview: command.length > 300 ? `${command.slice(0, 300)}…` : command,
    fullText: command,
    facts,
    allowedDecisions: decisions,
    ...(card ? { shown: card } : {}),
  };
  return ctx.approvals.requestOrDefer ? ctx.approvals.requestOrDefer(input, ctx.signal) : ctx.approvals.request(input, ctx.signal);
}

/**
 * Characters an approver cannot see on a card: direction overrides reorder what is shown,
 * zero-width and control characters vanish, and many lines push the end of a command out of
 * view. Said plainly on the card, so the approver knows the text is not what it looks like.
 */
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]/g;

export function hiddenCharacters(command: string): string | null {
  const found = [...command.matchAll(INVISIBLE)].map((m) => `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} at ${m.index}`);
  const lines = command.split(/\r\n|\n|\r/).length;
  const parts: string[] = [];
  if (found.length > 0) parts.push(`contains ${found.length} invisible or direction-changing character${found.length === 1 ? '' : 's'} (${found.slice(0, 5).join(', ')}${found.length > 5 ? ', …' : ''})`);
  if (lines > 1) parts.push(`spans ${lines} lines`);
  return parts.length > 0 ? `the command ${parts.join(' and ')}; read the full text before deciding` : null;
}

type AfterApproval = { run: true; script: string } | { run: false; reason: string };

/** What an approval outcome means; on expiry, askFallback (never above the configured security). */
export function afterApproval(outcome: ApprovalOutcome, command: string, verdict: ExecVerdict, security: ExecSecurity, askFallback: ExecSecurity): AfterApproval {
  switch (outcome) {
    // An approved command runs as the human saw it.
    case 'allow-once':
    case 'allow-always':
      return { run: true, script: command };
    case 'deny':
      return { run: false, reason: 'exec denied by the approver. Do not retry this command.' };
    case 'cancelled':
    case 'interrupted':
      return { run: false, reason: `exec not run: the approval was ${outcome}.` };
    case 'expired': {
      const fallback = RANK[askFallback] <= RANK[security] ? askFallback : security;
      if (verdict.inlineEval) return { run: false, reason: 'exec denied: approval-timeout (inline code is never approved by a fallback)' };
      if (fallback === 'full') return { run: true, script: command };
      if (fallback === 'allowlist' && verdict.analysis.ok && verdict.satisfied && verdict.fallbackScript) return { run: true, script: verdict.fallbackScript };
      if (fallback === 'allowlist') return { run: false, reason: 'exec denied: approval-timeout: allowlist-miss. Do not retry this command.' };
      return { run: false, reason: 'exec denied: approval-timeout. Do not retry this command.' };
    }
    default:
      // An outcome this code does not know (a newer approvals module, a corrupt row) never runs anything.
      return { run: false, reason: `exec not run: unknown approval outcome ${JSON.stringify(outcome)}.` };
  }
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((i) => !test(i))];
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, n));
}

async function waitFor(job: ExecJob, ms: number, signal: AbortSignal): Promise<boolean> {
  if (!job.running) return true;
  if (ms <= 0) return false;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const result = await Promise.race([
    job.done.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
      onAbort = () => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
    }),
  ]);
  clearTimeout(timer);
  if (onAbort) signal.removeEventListener('abort', onAbort);
  return result;
}

function completed(job: ExecJob): ToolResult {
  const output = job.outputText();
  const status = job.status === 'exited' && job.exitCode === 0 ? 'completed' : job.status === 'exited' ? 'failed' : job.status;
  const trailer =
    job.status === 'timed-out' ? '(killed: timeout)' : job.status === 'failed' ? `(could not start: ${job.error})` : job.exitCode !== null ? `(exit code ${job.exitCode})` : `(signal ${job.signal})`;
  return {
    content: [{ type: 'text', text: `${output === '' ? '(no output)' : output.replace(/\n$/, '')}\n\n${trailer}` }],
    details: { status, exitCode: job.exitCode, signal: job.signal, durationMs: (job.endedAt ?? Date.now()) - job.startedAt, cwd: job.cwd },
    isError: status !== 'completed',
  };
}

function running(job: ExecJob): ToolResult {
  const tail = job.outputText().slice(-2000);
  return {
    content: [
      {
        type: 'text',
        text: `Command still running in the background (session ${job.id}, pid ${job.pid}). Use the process tool (poll, log, write, kill) with sessionId "${job.id}".${tail ? `\n\nOutput so far:\n${tail}` : ''}`,
      },
    ],
    details: { status: 'running', sessionId: job.id, pid: job.pid, startedAt: job.startedAt, cwd: job.cwd, tail },
  };
}

function failure(message: string): ToolResult {
  return { content: [{ type: 'text', text: message }], details: { status: 'error', error: message }, isError: true };
}

function denied(message: string, verdict: ExecVerdict): ToolResult {
  return {
    content: [{ type: 'text', text: message }],
    details: { status: 'denied', reason: message, segments: verdict.segments.map((s) => ({ argv: s.argv, resolved: s.resolved, matchedBy: s.matchedBy })) },
    isError: true,
  };
}

/** What resolve_exec_env handlers returned, without the keys exec lets nobody set (each refusal logged). */
function pluginEnv(env: Record<string, string>, logger: { warn: (obj: object, msg: string) => void }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    const why = blockedOverride(key) ?? (value.includes('\0') ? 'value contains NUL' : null);
    if (why) logger.warn({ key, why }, 'resolve_exec_env variable refused');
    else out[key] = value;
  }
  return out;
}
