import path from 'node:path';
import { analyzeShellCommand, type ShellChainPart } from './analysis.js';
import {
  argPatternMatches,
  commandHashPattern,
  exactArgPattern,
  findAllowlistMatch,
  findCommandMatch,
  isLive,
  type AllowlistEntry,
} from './allowlist.js';
import { bindFiles, bindingChange, segmentScriptPaths, type Binding, type BoundFile, type SegmentFiles } from './content-binding.js';
import { detectControlCommand } from './control.js';
import { detectInlineEval, detectStdinProgram, INTERPRETER_LIKE, type InlineEvalHit } from './inline-eval.js';
import { commandName, isPathQualified, resolveExecutable, type ResolveEnv, type ResolvedExecutable } from './resolve.js';
import { buildEnforcedCommand, showArgv, type RewritePart } from './rewrite.js';
import { repoConfigInvocation, type RepoConfigHit } from './repo-config.js';
import { READ_ONLY_COMMANDS, readOnlyMatch, type ReadOnlyPolicy } from './read-only.js';
import { checkSafeBin, type SafeBinPolicy } from './safe-bins.js';
import { isSafeBuiltin } from './safe-builtins.js';
import { MULTICALL_BINARIES, runsAs, shellInvocation, unwrapDispatch } from './wrappers.js';

/**
 * The exec gate (reference A3): security × ask × allowlist → allow | ask | deny, with the
 * enforced rewrite for allowed commands and what an allow-always would store. Pure apart from
 * reading the file system to resolve executables.
 */
export type ExecSecurity = 'deny' | 'allowlist' | 'full';
export type ExecAsk = 'off' | 'on-miss' | 'always';
export type ExecDecision = 'allow' | 'ask' | 'deny';

export interface ExecPolicy {
  security: ExecSecurity;
  ask: ExecAsk;
  strictInlineEval: boolean;
  /** Config entries first, then stored ones (allow-always, imports). */
  allowlist: readonly AllowlistEntry[];
  safeBins: SafeBinPolicy;
  /** The default read-only commands (read-only.ts); set only for the sandbox host with `defaultAllowlist` on. */
  readOnly?: ReadOnlyPolicy | undefined;
}

export type MatchedBy = 'allowlist' | 'allow-always' | 'safe-bin' | 'safe-builtin' | 'read-only';

export interface SegmentVerdict {
  argv: string[];
  /** argv after transparent wrappers (`nice`, `timeout`, `env`) are removed. */
  effectiveArgv: string[];
  /** Resolved executable (realpath), null for builtins and unresolvable tokens. */
  resolved: string | null;
  matchedBy: MatchedBy | null;
  entry?: { pattern: string; argPattern?: string | undefined } | undefined;
  /** Why this segment is not satisfied. */
  miss?: string | undefined;
  /** The segment runs repository configuration (repo-config.ts). */
  repoConfig?: RepoConfigHit | undefined;
  /** An allow-always grant names this command but its script changed since it was approved. */
  changed?: string | undefined;
  /** What runs instead of `effectiveArgv` (a default git entry adds `--no-textconv --no-ext-diff`). */
  enforcedArgv?: string[] | undefined;
}

export interface PersistEntry {
  pattern: string;
  argPattern?: string | undefined;
  /** The script files the command runs, by content, as they are now (content-binding.ts); absent: none. */
  boundFiles?: BoundFile[] | undefined;
}

export interface AllowAlwaysPlan {
  offered: boolean;
  /** Why allow-always is not offered (shown on the card so the button's absence is explained). */
  why?: string | undefined;
  entries: PersistEntry[];
}

export interface ExecVerdict {
  decision: ExecDecision;
  reason: string;
  segments: SegmentVerdict[];
  /** The command that runs when allowed under the allowlist; null otherwise. */
  rewritten: string | null;
  /**
   * For a satisfied command that still needs a human (heredoc, inline code, ask=always): what an
   * askFallback of `allowlist` runs on expiry — the rewrite, heredoc bodies included. Null when
   * the allowlist is not satisfied or no rewrite is possible.
   */
  fallbackScript: string | null;
  analysis: { ok: true } | { ok: false; reason: string };
  /** Every segment is covered (allowlist, safe bin, builtin or an exact-command entry). */
  satisfied: boolean;
  /** Why a satisfied command still needs a human. */
  askReasons: string[];
  inlineEval: (InlineEvalHit & { segment: number }) | null;
  allowAlways: AllowAlwaysPlan;
  /** Grants that name this command but no longer cover it: what changed since approval. */
  changedSinceApproval: string[];
  /**
   * An allowed command that an allow-always grant covers: the files the grant bound, as this
   * verdict read them. The command must run these bytes (verified-run.ts), not the paths.
   */
  grantBinding?: BoundFile[] | undefined;
}

export interface EvaluateOptions extends ResolveEnv {
  now?: number;
  /**
   * The home `~` in allowlist patterns means: the operator's, who wrote them. It differs from
   * `home` (what `~` in a command means) in the sandbox, whose HOME is a private directory of
   * its own — there `~/bin/*` must not turn into "anything the command puts in its HOME's bin/".
   */
  patternHome?: string;
}

const MAX_SHELL_DEPTH = 3;

/**
 * The longest command exec judges. A verdict runs on the event loop every conversation shares,
 * so its cost must stay bounded whatever the model sends; 32 KiB is far beyond a command a person
 * would read on an approval card. (The shell gets the command as one argument, which Linux caps
 * at 128 KiB, so much longer ones would not run anyway.)
 */
export const MAX_COMMAND_CHARS = 32_768;
/** The most commands one verdict judges: pipeline stages and chained commands, shell `-c` payloads included. */
export const MAX_COMMAND_SEGMENTS = 64;

/** One verdict's shared state: the segment budget, and executable lookups made once per token and directory. */
interface VerdictScope {
  segmentsLeft: number;
  resolved: Map<string, ResolvedExecutable>;
}

interface SegmentEval {
  verdict: SegmentVerdict;
  exe: ResolvedExecutable | null;
  blocked: boolean;
  inlineEval: InlineEvalHit | null;
  /** Shell `-c` payload that cannot be bound to executables (login shell, unreadable, nested). */
  shellPayload: boolean;
  /** An earlier `cd` in the chain changed the directory the arguments are relative to. */
  cwdMoved: boolean;
  /** Repository configuration this segment (or its shell payload) runs. */
  repoConfig: RepoConfigHit | null;
  /** The files it runs as programs, by content; computed when a grant or a plan needs them. */
  binding: () => Binding;
  /** Which files it binds and where its script operands sit (for the verified run). */
  files: () => SegmentFiles;
  /** A shell `-c` payload's own chain, and where the payload sits in the argv. */
  payload?: { parts: readonly ShellChainPart[]; segments: readonly SegmentEval[]; index: number } | undefined;
}

/** The working directory a segment's relative paths resolve against; null when a `cd` made it unknown. */
interface SegmentPlace {
  cwdMoved: boolean;
  cwd: string | null;
}

export function evaluateExec(command: string, policy: ExecPolicy, options: EvaluateOptions): ExecVerdict {
  const now = options.now ?? Date.now();
  const noPlan = (why: string): AllowAlwaysPlan => ({ offered: false, why, entries: [] });
  const refuse = (reason: string): ExecVerdict => ({
    decision: 'deny',
    reason,
    segments: [],
    rewritten: null,
    fallbackScript: null,
    analysis: { ok: false, reason },
    satisfied: false,
    askReasons: [],
    inlineEval: null,
    allowAlways: noPlan('nothing to approve'),
    changedSinceApproval: [],
  });
  if (command.length > MAX_COMMAND_CHARS) {
    if (policy.security === 'deny') return refuse('exec is disabled (tools.exec.security = deny)');
    return refuse(`the command is ${command.length.toLocaleString('en-US')} characters long; exec takes at most ${MAX_COMMAND_CHARS.toLocaleString('en-US')}: split the work into shorter commands or put it in a script file`);
  }
  const analysis = analyzeShellCommand(command, { maxSegments: MAX_COMMAND_SEGMENTS });
  const scope: VerdictScope = { segmentsLeft: MAX_COMMAND_SEGMENTS, resolved: new Map() };
  const segments = analysis.ok ? evaluateChain(analysis.parts, policy, options, now, 0, options.cwd, scope) : [];
  if (scope.segmentsLeft < 0 || (!analysis.ok && analysis.tooManySegments)) {
    if (policy.security === 'deny') return refuse('exec is disabled (tools.exec.security = deny)');
    return refuse(`the command has more than ${MAX_COMMAND_SEGMENTS} commands (pipeline stages, chained commands and shell -c payloads count alike); exec judges at most ${MAX_COMMAND_SEGMENTS}: split the work or put it in a script file`);
  }
  const verdicts = segments.map((s) => s.verdict);
  const base = { segments: verdicts, analysis: analysis.ok ? ({ ok: true } as const) : { ok: false as const, reason: analysis.reason } };
  const result = (decision: ExecDecision, reason: string, extra: Partial<ExecVerdict> = {}): ExecVerdict => ({
    decision,
    reason,
    rewritten: null,
    fallbackScript: null,
    satisfied: false,
    askReasons: [],
    inlineEval: null,
    allowAlways: noPlan('nothing to approve'),
    changedSinceApproval: verdicts.flatMap((v) => (v.changed ? [v.changed] : [])),
    ...base,
    ...extra,
  });

  if (policy.security === 'deny') return result('deny', 'exec is disabled (tools.exec.security = deny)');

  const control = detectControlCommand(command, verdicts.map((v) => v.effectiveArgv));
  if (control) return result('deny', `refused: the command would decide approvals itself (${control})`);

  const inlineIndex = policy.strictInlineEval ? segments.findIndex((s) => s.inlineEval !== null) : -1;
  const inlineEval = inlineIndex >= 0 ? { ...segments[inlineIndex]!.inlineEval!, segment: inlineIndex } : null;
  const inlineReason = inlineEval
    ? inlineEval.flag === 'stdin'
      ? `\`${inlineEval.interpreter}\` reads its program from stdin: inline code needs approval (strictInlineEval)`
      : `inline code evaluation (\`${inlineEval.interpreter} ${inlineEval.flag}\`) needs approval (strictInlineEval)`
    : null;

  const askOrDeny = (reason: string, extra: Partial<ExecVerdict>): ExecVerdict =>
    policy.ask === 'off' ? result('deny', `${reason}; tools.exec.ask is off`, { ...extra, allowAlways: noPlan('ask is off') }) : result('ask', reason, extra);

  if (policy.security === 'full') {
    if (inlineReason) return askOrDeny(inlineReason, { inlineEval, allowAlways: noPlan('inline code evaluation is never stored') });
    if (policy.ask === 'always') return result('ask', 'tools.exec.ask is always', { allowAlways: noPlan('ask is always: every command is confirmed') });
    return result('allow', 'tools.exec.security is full', { satisfied: true });
  }

  // security = allowlist
  if (!analysis.ok) {
    return askOrDeny(`unanalyzable: ${analysis.reason}`, { allowAlways: noPlan('the command cannot be analysed, so it cannot be stored') });
  }
  let commandEntry = findCommandMatch(policy.allowlist, command, now);
  const commandChange = commandEntry ? grantChange(commandEntry, commandBinding(segments)) : null;
  // An exact-command grant never covers a segment that runs repository configuration.
  if (commandChange !== null || segments.some((s) => s.repoConfig && s.verdict.matchedBy === null)) commandEntry = null;
  const changedSinceApproval = [...(commandChange ? [commandChange] : []), ...verdicts.flatMap((v) => (v.changed ? [v.changed] : []))];
  const satisfied = commandEntry !== null || verdicts.every((v) => v.matchedBy !== null);
  const askReasons: string[] = [];
  if (analysis.hasHeredoc) askReasons.push('heredoc input is always confirmed');
  if (inlineReason) askReasons.push(inlineReason);
  if (policy.ask === 'always') askReasons.push('tools.exec.ask is always');
  const allowAlways = planAllowAlways(command, analysis.parts, segments, policy, inlineEval !== null, analysis.hasHeredoc);

  if (satisfied) {
    const rewritten = buildRewrite(analysis.parts, segments);
    // Without a rewrite the raw text would run; only an exact-command grant approved that text.
    if (rewritten === null && commandEntry === null) askReasons.push('no enforceable rewrite of the command');
    if (askReasons.length === 0) {
      const how = commandEntry ? 'an allow-always grant for this exact command' : describeSatisfied(verdicts);
      return result('allow', `allowlist satisfied: ${how}`, { satisfied, rewritten, changedSinceApproval, ...grantBound(segments, commandEntry) });
    }
    // Never the raw text: the rewrite carries heredoc bodies, so only what was judged can run.
    const fallbackScript = rewritten;
    return askOrDeny(askReasons.join('; '), { satisfied, askReasons, inlineEval, allowAlways, fallbackScript, changedSinceApproval, ...grantBound(segments, commandEntry) });
  }
  const misses = verdicts
    .map((v, i) => (v.matchedBy === null ? `segment ${i + 1} \`${showArgv(v.argv)}\`: ${v.miss}` : null))
    .filter((m): m is string => m !== null);
  if (commandChange) misses.unshift(`the allow-always grant for this command no longer covers it: ${commandChange}`);
  return askOrDeny(`allowlist miss: ${misses.join('; ')}`, { askReasons, inlineEval, allowAlways, changedSinceApproval });
}

/**
 * What the allow-always grants covering a satisfied command bound, as this verdict read it (the
 * same reads the grants were compared with): the bytes the command must run.
 */
function grantBound(segments: readonly SegmentEval[], commandEntry: AllowlistEntry | null): Pick<ExecVerdict, 'grantBinding'> {
  const files: BoundFile[] = [];
  const from = commandEntry?.source === 'allow-always' ? segments : segments.filter((s) => s.verdict.matchedBy === 'allow-always');
  for (const s of from) {
    const b = s.binding();
    if (b.ok) files.push(...b.files);
  }
  return files.length > 0 ? { grantBinding: files } : {};
}

function describeSatisfied(verdicts: readonly SegmentVerdict[]): string {
  return verdicts.map((v) => `${commandName(v.effectiveArgv[0] ?? '')} (${v.matchedBy})`).join(', ');
}

/**
 * Evaluates a chain's segments in order. After a `cd`, relative arguments name other files than
 * the ones an argv-bound grant approved (`cwdMoved`); the directory is followed where the `cd`
 * is plain (`cd sub`) so content bindings can still name the right files.
 */
function evaluateChain(parts: readonly ShellChainPart[], policy: ExecPolicy, env: EvaluateOptions, now: number, depth: number, cwd: string, scope: VerdictScope): SegmentEval[] {
  const out: SegmentEval[] = [];
  let place: SegmentPlace = { cwdMoved: false, cwd };
  for (const part of parts) {
    // Over budget: stop judging; evaluateExec refuses the whole command.
    scope.segmentsLeft -= part.pipeline.length;
    if (scope.segmentsLeft < 0) return out;
    const start = out.length;
    for (const s of part.pipeline) out.push(evaluateSegment(s.argv, policy, env, now, depth, place, scope));
    for (let k = start; k < out.length; k++) {
      const argv = out[k]!.verdict.effectiveArgv;
      if (out[k]!.verdict.matchedBy === 'safe-builtin' && argv[0]!.toLowerCase() === 'cd') place = { cwdMoved: true, cwd: cdTarget(place.cwd, argv.slice(1), env.home) };
    }
  }
  return out;
}

/** `resolveExecutable`, asked once per token (and directory, for a path) within one verdict. */
function resolveIn(scope: VerdictScope, token: string, env: ResolveEnv): ResolvedExecutable {
  // A bare token is looked up in PATH alone (absolute directories only), so cwd does not matter to it.
  const key = isPathQualified(token) ? `${env.cwd}\0${token}` : token;
  let hit = scope.resolved.get(key);
  if (!hit) {
    hit = resolveExecutable(token, env);
    scope.resolved.set(key, hit);
  }
  return hit;
}

/** Where `cd ARG` leads, when that is plain to see; null otherwise (`cd -`, `cd` with options). */
function cdTarget(cwd: string | null, args: readonly string[], home: string): string | null {
  if (cwd === null || args.length > 1) return null;
  const target = args[0] ?? '~';
  if (target.startsWith('-')) return null;
  if (target === '~' || target.startsWith('~/')) return path.join(home, target.slice(1));
  if (target.startsWith('~')) return null;
  return path.resolve(cwd, target);
}

function evaluateSegment(argv: string[], policy: ExecPolicy, env: EvaluateOptions, now: number, depth: number, place: SegmentPlace, scope: VerdictScope): SegmentEval {
  const { cwdMoved } = place;
  const unwrapped = unwrapDispatch(argv);
  const unbound = (): Binding => ({ ok: false, why: 'the command could not be analysed' });
  if (!unwrapped.ok) {
    return {
      verdict: { argv, effectiveArgv: argv, resolved: null, matchedBy: null, miss: `blocked wrapper: ${unwrapped.reason}` },
      exe: null,
      blocked: true,
      inlineEval: null,
      shellPayload: false,
      cwdMoved,
      repoConfig: null,
      binding: unbound,
      files: () => ({ ok: false, why: 'the command could not be analysed' }),
    };
  }
  const effective = unwrapped.argv;
  if (isSafeBuiltin(effective)) {
    const none = (): Binding => ({ ok: true, files: [] });
    const noFiles = (): SegmentFiles => ({ ok: true, paths: [], sites: [], exe: null });
    return { verdict: { argv, effectiveArgv: effective, resolved: null, matchedBy: 'safe-builtin' }, exe: null, blocked: false, inlineEval: null, shellPayload: false, cwdMoved, repoConfig: null, binding: none, files: noFiles };
  }
  const exe = resolveIn(scope, effective[0]!, env);
  const args = effective.slice(1);
  // Shells and interpreters are recognised by the name written and by the program that runs.
  const program = runsAs(exe);
  const shell = shellInvocation(effective, program);
  let inlineEval = detectInlineEval(effective, program) ?? detectStdinProgram(effective, program);
  let shellPayload = false;
  let repoConfig = repoConfigInvocation(effective, { realPath: exe.realPath });
  let inner: SegmentEval[] | null = [];
  let payload: SegmentEval['payload'];
  if (shell?.payload != null) {
    shellPayload = true;
    const judged = payloadSegments(shell.payload, policy, env, now, depth, place.cwd, scope);
    inner = judged?.segments ?? null;
    if (judged && shell.payloadIndex !== null) payload = { parts: judged.parts, segments: judged.segments, index: shell.payloadIndex };
    // Inline code inside the payload still counts: `sh -c 'python -c …'`.
    inlineEval ??= payloadInlineEval(shell.shell, inner);
    // So does repository configuration: `sh -c 'make test'` runs the Makefile (unless an opted-in entry covers it).
    repoConfig ??= inner?.find((s) => s.repoConfig && s.verdict.matchedBy === null)?.repoConfig ?? null;
  }
  const files = once(() => segmentScriptPaths({ argv: effective, exe, cwd: place.cwd, home: env.home }));
  const binding = once((): Binding => {
    const own = files();
    if (!own.ok) return own;
    if (inner === null) return { ok: false, why: 'the shell payload cannot be analysed' };
    const bound = bindFiles(own.paths);
    if (!bound.ok) return bound;
    const all: BoundFile[] = [...bound.files];
    for (const s of inner) {
      const b = s.binding();
      if (!b.ok) return b;
      for (const f of b.files) all.push(f);
    }
    return { ok: true, files: all };
  });
  const verdict: SegmentVerdict = { argv, effectiveArgv: effective, resolved: exe.realPath ?? exe.resolvedPath, matchedBy: null };
  if (repoConfig) verdict.repoConfig = repoConfig;
  const patternHome = env.patternHome ?? env.home;
  const target = { exe, args, home: patternHome, requireArgPattern: shellPayload };
  // An allow-always grant binds the exact argv as approved, in the directory it was approved in.
  let pool = cwdMoved ? policy.allowlist.filter((e) => !(e.source === 'allow-always' && e.argPattern)) : policy.allowlist;
  const lookup = (entries: readonly AllowlistEntry[]): AllowlistEntry | null => {
    const found = findAllowlistMatch(entries, target, now);
    if (found || !shell?.script) return found;
    // A plain `sh script.sh a b` is covered by an entry for the script run with `a b`.
    const script = resolveIn(scope, shell.script.includes('/') ? shell.script : `./${shell.script}`, env);
    return findAllowlistMatch(entries, { exe: script, args: shell.scriptArgs, home: patternHome }, now);
  };
  let entry = lookup(pool);
  // A grant whose script changed no longer counts; another entry still may.
  while (entry && entry.source === 'allow-always') {
    const change = grantChange(entry, binding());
    if (change === null) break;
    verdict.changed ??= change;
    const stale = entry;
    pool = pool.filter((e) => e !== stale);
    entry = lookup(pool);
  }
  // A grant for this argv whose executable link now leads elsewhere no longer matches by pattern; say so.
  if (!entry && !verdict.changed) verdict.changed = staleGrant(pool, args, binding, now);
  // trustRepoConfig trusts the working directory's repository; after a `cd` the binary reads
  // another directory's configuration (one the agent may have written, and git's hardening never listed).
  const trusted = (opted: boolean | undefined) => !repoConfig || (opted === true && repoConfig.untrusted === null && !cwdMoved);
  // The sandbox host's default read-only list (read-only.ts), after entries and safe bins.
  let readOnlyWhy: string | undefined;
  const readOnly = (): boolean => {
    const match = policy.readOnly ? readOnlyMatch(effective, exe.realPath, policy.readOnly) : null;
    if (match && !match.ok && READ_ONLY_COMMANDS.includes(commandName(effective[0]!))) readOnlyWhy = match.reason;
    if (!match?.ok || !trusted(match.trustRepoConfig)) return false;
    verdict.matchedBy = 'read-only';
    if (match.argv) verdict.enforcedArgv = match.argv;
    return true;
  };
  if (entry && trusted(entry.trustRepoConfig)) {
    verdict.matchedBy = entry.source === 'allow-always' ? 'allow-always' : 'allowlist';
    verdict.entry = { pattern: entry.pattern, argPattern: entry.argPattern };
  } else if (entry) {
    if (!readOnly()) verdict.miss = repoConfigMiss(repoConfig!, entry, cwdMoved);
  } else {
    const safe = checkSafeBin(effective, exe.realPath, policy.safeBins);
    if (safe.ok && !repoConfig) verdict.matchedBy = 'safe-bin';
    else if (!readOnly()) {
      if (safe.ok && repoConfig) verdict.miss = repoConfigMiss(repoConfig, null);
      else if (verdict.changed) verdict.miss = verdict.changed;
      else if (exe.realPath === null) verdict.miss = exe.token === '' ? 'the command word is empty: the shell runs no program' : exe.pathQualified ? `\`${exe.token}\` is not an executable file` : `\`${exe.token}\` not found in PATH`;
      else if (shellPayload) verdict.miss = `shell payload \`${shell!.payload}\` is not covered by an entry for ${exe.realPath} with an argPattern`;
      else verdict.miss = `no allowlist entry, safe bin or builtin covers ${exe.realPath}${policy.safeBins.bins.has(commandName(effective[0]!)) && !safe.ok ? ` (${safe.reason})` : ''}`;
    }
  }
  // Why the default read-only list, which has this command, does not cover this use of it.
  if (verdict.miss && readOnlyWhy) verdict.miss += `; the default read-only list does not cover it: ${readOnlyWhy}`;
  return { verdict, exe, blocked: false, inlineEval, shellPayload, cwdMoved, repoConfig, binding, files, payload };
}

function once<T>(compute: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = compute();
      done = true;
    }
    return value;
  };
}

/** Why a class member's entry does not let it run silently. */
function repoConfigMiss(hit: RepoConfigHit, entry: AllowlistEntry | null, cwdMoved = false): string {
  if (entry?.trustRepoConfig === true && cwdMoved && hit.untrusted === null) {
    return `after a \`cd\`, \`${hit.binary}\` reads another directory's repository configuration; trustRepoConfig on the entry for ${entry.pattern} covers the working directory's only`;
  }
  if (entry?.trustRepoConfig === true && hit.untrusted !== null) return `${hit.untrusted}; trustRepoConfig on the entry for ${entry.pattern} does not cover it`;
  const how = entry === null ? 'a safe-bin profile' : entry.source === 'config' || entry.source === undefined ? `the entry for ${entry.pattern}` : `the stored ${entry.source} entry for ${entry.pattern}`;
  return `\`${hit.binary}\` runs repository configuration the agent can write (${hit.reads}), so ${how} does not let it run unasked; an operator may opt in with trustRepoConfig: true on a tools.exec.allowlist entry`;
}

/**
 * Why an allow-always grant no longer covers what the segment runs, or null when it does. A
 * grant from before content binding covers only commands that run no script file.
 */
function grantChange(entry: AllowlistEntry, now: Binding): string | null {
  if (entry.source !== 'allow-always') return null;
  if (!now.ok) return `the grant's script cannot be checked: ${now.why}`;
  if (entry.boundFiles === undefined) {
    return now.files.length === 0 ? null : `the grant was approved before Warden bound script content; ${now.files.map((f) => f.path).join(', ')} must be approved again`;
  }
  return bindingChange(entry.boundFiles, now.files);
}

/**
 * Why an allow-always grant made for this very command (same argv, same files by path) no
 * longer covers it, when its pattern stopped matching: the executable is a link that was
 * swapped. Undefined when there is no such grant.
 */
function staleGrant(entries: readonly AllowlistEntry[], args: readonly string[], binding: () => Binding, now: number): string | undefined {
  const candidates = entries.filter((e) => e.source === 'allow-always' && e.boundFiles && e.boundFiles.length > 0 && e.argPattern && isLive(e, now) && argPatternMatches(e.argPattern, args));
  if (candidates.length === 0) return undefined;
  const current = binding();
  if (!current.ok) return undefined;
  const paths = current.files.map((f) => f.path).join('\0');
  const grant = candidates.find((e) => e.boundFiles!.map((f) => f.path).join('\0') === paths);
  return grant ? (bindingChange(grant.boundFiles!, current.files) ?? undefined) : undefined;
}

/** Every file the whole command runs as a program, for an exact-command grant. */
function commandBinding(segments: readonly SegmentEval[]): Binding {
  const files: BoundFile[] = [];
  for (const s of segments) {
    const b = s.binding();
    if (!b.ok) return b;
    for (const f of b.files) files.push(f);
  }
  return { ok: true, files };
}

/** The segments of a shell `-c` payload, judged like top-level ones; null when unreadable or nested too deep. */
function payloadSegments(
  payload: string,
  policy: ExecPolicy,
  env: EvaluateOptions,
  now: number,
  depth: number,
  cwd: string | null,
  scope: VerdictScope,
): { parts: readonly ShellChainPart[]; segments: SegmentEval[] } | null {
  if (depth >= MAX_SHELL_DEPTH) return null;
  const inner = analyzeShellCommand(payload, { maxSegments: Math.max(0, scope.segmentsLeft) });
  if (!inner.ok) {
    if (inner.tooManySegments) scope.segmentsLeft = -1;
    return null;
  }
  // The payload starts in the shell's directory; a `cd` inside it moves only its own segments.
  const segments = evaluateChain(inner.parts, policy, { ...env, cwd: cwd ?? env.cwd }, now, depth + 1, cwd ?? env.cwd, scope).map((s) =>
    cwd === null ? { ...s, binding: (): Binding => ({ ok: false, why: 'the shell payload runs in a directory an earlier `cd` changed' }) } : s,
  );
  return { parts: inner.parts, segments };
}

/**
 * Words the shell running a payload expands into other words — parameters (`$1`, `"$@"`, the
 * outer command's own arguments), globs (`-[c]` once a file `-c` exists), bash's braces
 * (`{-c,code}`), `~`: the argv read from the payload text is not the one it runs. (Top-level
 * segments run as the quoted rewrite, where nothing expands; a payload runs as written.)
 */
const PAYLOAD_EXPANSION = /[$*?[{~]/;

/**
 * Inline code inside a shell `-c` payload. The payload is shell code itself, so whatever the
 * analysis cannot follow — an unreadable payload, nesting past the depth limit, a command word
 * that is no executable (`eval`, `.`, `$x`, …), a word the shell expands — counts as inline
 * code: fail closed.
 */
function payloadInlineEval(shell: string, inner: readonly SegmentEval[] | null): InlineEvalHit | null {
  const opaque: InlineEvalHit = { interpreter: shell, flag: '-c' };
  if (inner === null) return opaque;
  for (const evaluated of inner) {
    if (evaluated.inlineEval) return evaluated.inlineEval;
    const runsProgram = evaluated.verdict.matchedBy === 'safe-builtin' || evaluated.exe?.realPath != null;
    if (evaluated.blocked || !runsProgram) return opaque;
    if (evaluated.verdict.argv.some((word) => PAYLOAD_EXPANSION.test(word))) return opaque;
  }
  return null;
}

/**
 * The path a segment runs as: the executable's real path, so a link swapped after the check
 * cannot change the program — except for a multi-call binary, which picks its applet by the name
 * it is started under: `ls` → busybox must run as `…/ls`, or `ls sh -c id` runs busybox's shell.
 */
function runPath(segment: SegmentEval): string {
  const exe = segment.exe;
  if (exe?.realPath && exe.resolvedPath && MULTICALL_BINARIES.has(commandName(exe.realPath)) && commandName(exe.resolvedPath) !== commandName(exe.realPath)) {
    return exe.resolvedPath;
  }
  return segment.verdict.resolved!;
}

/** Puts a verified copy in place of a program in a segment's argv; null when that cannot be done. */
type Substitute = (segment: SegmentEval, argv: string[]) => string[] | null;

function buildRewrite(parts: readonly ShellChainPart[], segments: readonly SegmentEval[], substitute?: Substitute): string | null {
  const verdicts = segments.map((s) => s.verdict);
  let index = 0;
  const rewriteParts: RewritePart[] = [];
  for (const part of parts) {
    const pipeline = [];
    for (const segment of part.pipeline) {
      const v = verdicts[index++]!;
      // Builtins run under their canonical name: `CD` would be a PATH lookup, not the builtin judged.
      const written = v.enforcedArgv ?? v.effectiveArgv;
      const head = v.matchedBy === 'safe-builtin' ? v.effectiveArgv[0]!.toLowerCase() : v.resolved ? runPath(segments[index - 1]!) : null;
      if (head === null) return null;
      // A copy with its first word replaced (no spread proportional to the argv).
      let argv = written.slice();
      argv[0] = head;
      if (substitute) {
        const replaced = substitute(segments[index - 1]!, argv);
        if (replaced === null) return null;
        argv = replaced;
      }
      // Heredoc positions are those of the argv as written; an argv that grew cannot carry them.
      if (v.enforcedArgv && segment.heredocs.length > 0) return null;
      // Wrappers only ever remove a prefix, so heredoc positions shift by what they removed.
      const shift = v.argv.length - v.effectiveArgv.length;
      const heredocs = segment.heredocs.map((h) => ({ start: h.argvStart - shift, count: h.argvCount, operator: h.operator, body: h.body }));
      // An operator sharing a token with other text, or swallowed by a wrapper, cannot be re-emitted.
      if (heredocs.some((h) => h.count === 0 || h.start < 1)) return null;
      pipeline.push({ argv, heredocs });
    }
    rewriteParts.push({ op: part.op, pipeline });
  }
  return buildEnforcedCommand(rewriteParts);
}

/** Characters the shell expands at run time; a grant for such text would not mean what was approved. */
const RUNTIME_EXPANSION = /[$`*?[{~]/;

/**
 * What allow-always would store (reference A6, with Warden's narrower binding): per missing
 * segment, its resolved executable and an exact-argv argPattern; when a segment cannot be bound
 * (a shell `-c` payload), one exact-command entry instead. Never for inline code, runtime
 * expansion, blocked wrappers, heredocs, or `ask: always`.
 */
function planAllowAlways(
  command: string,
  parts: readonly ShellChainPart[],
  segments: readonly SegmentEval[],
  policy: ExecPolicy,
  inlineEval: boolean,
  heredoc: boolean,
): AllowAlwaysPlan {
  const no = (why: string): AllowAlwaysPlan => ({ offered: false, why, entries: [] });
  if (policy.ask === 'always') return no('ask is always: every command is confirmed');
  if (inlineEval || segments.some((s) => s.inlineEval !== null)) return no('inline code evaluation is never stored');
  if (heredoc) return no('heredoc input is confirmed every time');
  const raws = parts.flatMap((p) => p.pipeline.map((s) => s.raw));
  if (raws.some((raw) => RUNTIME_EXPANSION.test(raw))) return no('the command expands variables, globs or substitutions at run time');
  if (segments.some((s) => s.blocked)) return no('a wrapper (sudo, env with assignments, …) cannot be stored');
  const entries: PersistEntry[] = [];
  let needsCommandEntry = false;
  for (const s of segments) {
    if (s.verdict.matchedBy !== null) continue;
    if (s.repoConfig) return no(`\`${s.repoConfig.binary}\` runs repository configuration the agent can write: it is confirmed every time (an operator may opt in with trustRepoConfig on a config entry)`);
    if (!s.exe?.realPath) return no('an executable could not be resolved');
    const name = commandName(s.verdict.effectiveArgv[0]!);
    if (s.shellPayload || s.cwdMoved || (INTERPRETER_LIKE.has(name) && !policy.strictInlineEval)) {
      needsCommandEntry = true;
      continue;
    }
    // The grant binds the scripts the command runs by content: a rewritten script asks again.
    const bound = s.binding();
    if (!bound.ok) return no(bound.why);
    entries.push({ pattern: s.exe.realPath, argPattern: exactArgPattern(s.verdict.effectiveArgv.slice(1)), ...boundField(bound.files) });
  }
  if (needsCommandEntry) {
    const bound = commandBinding(segments);
    if (!bound.ok) return no(bound.why);
    return { offered: true, entries: [{ pattern: commandHashPattern(command), ...boundField(bound.files) }] };
  }
  if (entries.length === 0) return no('nothing to store');
  return { offered: true, entries };
}

/**
 * The script files a command runs, by content (content-binding.ts), whatever its verdict: what
 * an approver's decision rests on besides the text. The exec tool refuses an approved command
 * whose scripts changed while its card waited.
 */
export function commandScriptBinding(command: string, policy: ExecPolicy, options: EvaluateOptions): Binding {
  if (command.length > MAX_COMMAND_CHARS) return { ok: false, why: `the command is longer than ${MAX_COMMAND_CHARS} characters` };
  const analysis = analyzeShellCommand(command, { maxSegments: MAX_COMMAND_SEGMENTS });
  if (!analysis.ok) return { ok: false, why: `the command cannot be analysed: ${analysis.reason}` };
  const scope: VerdictScope = { segmentsLeft: MAX_COMMAND_SEGMENTS, resolved: new Map() };
  const segments = evaluateChain(analysis.parts, policy, options, options.now ?? Date.now(), 0, options.cwd, scope);
  if (scope.segmentsLeft < 0) return { ok: false, why: `the command has more than ${MAX_COMMAND_SEGMENTS} commands` };
  return commandBinding(segments);
}

/**
 * The command as it runs on verified copies (verified-run.ts): the enforced rewrite, with each
 * bound executable and script operand — in a shell `-c` payload too — replaced by its copy, at
 * the exact argv place the interpreter reads it from. An error when that cannot be built: the
 * command expands words at run time (the rewrite would not mean the approved text), or a
 * segment cannot be rewritten. The caller then runs nothing.
 */
export function verifiedCommand(command: string, policy: ExecPolicy, options: EvaluateOptions, copyOf: (file: string) => string | undefined): { ok: true; script: string } | { ok: false; why: string } {
  if (command.length > MAX_COMMAND_CHARS) return { ok: false, why: 'the command is too long' };
  const analysis = analyzeShellCommand(command, { maxSegments: MAX_COMMAND_SEGMENTS });
  if (!analysis.ok) return { ok: false, why: `the command cannot be analysed: ${analysis.reason}` };
  if (analysis.parts.some((p) => p.pipeline.some((s) => RUNTIME_EXPANSION.test(s.raw)))) {
    return { ok: false, why: 'the command expands variables, globs or substitutions at run time, so it cannot run as the verified copies: write it without them (exec takes variables in its env parameter)' };
  }
  const scope: VerdictScope = { segmentsLeft: MAX_COMMAND_SEGMENTS, resolved: new Map() };
  const segments = evaluateChain(analysis.parts, policy, options, options.now ?? Date.now(), 0, options.cwd, scope);
  if (scope.segmentsLeft < 0) return { ok: false, why: `the command has more than ${MAX_COMMAND_SEGMENTS} commands` };
  const substitute: Substitute = (segment, argv) => {
    if (segment.verdict.matchedBy === 'safe-builtin' || segment.blocked) return argv;
    const out = argv;
    const files = segment.files();
    if (files.ok) {
      if (files.exe) out[0] = copyOf(files.exe) ?? out[0]!;
      for (const site of files.sites) {
        const copy = copyOf(site.path);
        if (copy !== undefined) out[site.index] = site.prefix + copy;
      }
    }
    if (segment.payload) {
      const inner = buildRewrite(segment.payload.parts, segment.payload.segments, substitute);
      if (inner === null) return usesCopies(segment.payload.segments, copyOf) ? null : out;
      out[segment.payload.index] = inner;
    }
    return out;
  };
  const script = buildRewrite(analysis.parts, segments, substitute);
  if (script === null) return { ok: false, why: 'a command in it cannot be rewritten to run the verified copies (an unresolved program, or heredoc input after a wrapper)' };
  return { ok: true, script };
}

/** Whether any of these segments runs a program that has a verified copy. */
function usesCopies(segments: readonly SegmentEval[], copyOf: (file: string) => string | undefined): boolean {
  return segments.some((s) => {
    const files = s.files();
    return (files.ok && ((files.exe !== null && copyOf(files.exe) !== undefined) || files.sites.some((x) => copyOf(x.path) !== undefined))) || (s.payload !== undefined && usesCopies(s.payload.segments, copyOf));
  });
}

/** Present only when the command runs a script file; the store records "none" for the rest. */
const boundField = (files: BoundFile[]): Pick<PersistEntry, 'boundFiles'> => (files.length > 0 ? { boundFiles: files } : {});
