import { userInfo } from 'node:os';
import { ApprovalService } from '../approvals/service.js';
import type { ApprovalRequest, Grant } from '../approvals/types.js';
import { closest } from '../config/errors.js';
import { EventBus } from '../events/events.js';
import { ExecAllowlistStore, type StoredAllowlistEntry } from '../exec/allowlist-store.js';
import type { BoundFile } from '../exec/content-binding.js';
import { resolveDataDir } from '../store/data-dir.js';
import { openConfiguredStore } from '../app/migrations.js';
import { EXIT, stringOption, type CliIO, type CommandRunner } from './args.js';
import { loadConfigForCommand } from './config.js';
import { unknownFlagProblems } from './context.js';

/**
 * `warden approvals list | history | grants | revoke ID | resolve ID DECISION [--json]`: the
 * approval ledger and the allow-always grants. `resolve` decides as the local operator.
 */

const FLAGS = ['config', 'json', 'limit', 'session', 'all', 'help'];
const SUBCOMMANDS = ['list', 'history', 'grants', 'revoke', 'resolve'];
const DECISION_ALIASES: Record<string, string> = {
  once: 'allow-once',
  always: 'allow-always',
  conversation: 'allow-conversation',
  timed: 'allow-timed',
  'allow-once': 'allow-once',
  'allow-always': 'allow-always',
  'allow-conversation': 'allow-conversation',
  'allow-timed': 'allow-timed',
  deny: 'deny',
};

export const run: CommandRunner = async (args, io) => {
  const json = args.options.get('json') === true;
  const problems = unknownFlagProblems(args, FLAGS, closest);
  const [sub, ...rest] = args.positionals;
  const arity: Record<string, number> = { list: 0, history: 0, grants: 0, revoke: 1, resolve: 2 };
  if (sub === undefined) problems.push(`missing subcommand: ${SUBCOMMANDS.join(' | ')}`);
  else if (!SUBCOMMANDS.includes(sub)) {
    const hint = closest(sub, SUBCOMMANDS);
    problems.push(`unknown subcommand "${sub}"${hint ? ` (did you mean "${hint}"?)` : ''}; expected ${SUBCOMMANDS.join(' | ')}`);
  } else if (rest.length !== arity[sub]) {
    problems.push(sub === 'revoke' ? 'usage: warden approvals revoke GRANT_ID' : sub === 'resolve' ? 'usage: warden approvals resolve ID allow-once|allow-always|deny' : `${sub} takes no arguments`);
  }
  const limitText = stringOption(args, 'limit');
  const limit = limitText === undefined ? 50 : Number(limitText);
  if (!Number.isInteger(limit) || limit <= 0) problems.push(`--limit: expected a positive whole number, got "${limitText}"`);

  const loaded = loadConfigForCommand(args, io);
  if (!loaded || problems.length > 0) {
    if (problems.length) io.stderr(problems.map((p) => `warden approvals: ${p}`).join('\n'));
    return EXIT.badInput;
  }
  const opened = await openConfiguredStore({ dataDir: resolveDataDir({ configDataDir: loaded.config.dataDir, env: io.env, cwd: loaded.baseDir }), store: loaded.config.store });
  if (!opened.ok) {
    io.stderr(`warden approvals: ${opened.error.message}`);
    return EXIT.badInput;
  }
  const store = opened.store;
  const approvals = new ApprovalService({ store, config: loaded.config, events: new EventBus() });
  const operator = userInfo().username || 'operator';
  const sessionKey = stringOption(args, 'session');
  try {
    switch (sub) {
      case 'list': {
        const pending = await approvals.list(sessionKey ? { sessionKey } : {});
        out(io, json, { pending }, () => (pending.length ? pending.map(requestLine).join('\n') : 'no pending approvals'));
        return EXIT.ok;
      }
      case 'history': {
        const history = await approvals.history({ limit, ...(sessionKey ? { sessionKey } : {}) });
        out(io, json, { history }, () => (history.length ? history.map(requestLine).join('\n') : 'no decided approvals'));
        return EXIT.ok;
      }
      case 'grants': {
        const all = args.options.get('all') === true;
        const grants = await approvals.grants.list({ all });
        // Exec allow-always grants live in the exec allowlist store, bound to an executable and argv.
        const now = Date.now();
        const exec = (await new ExecAllowlistStore(store.db).all()).filter((e) => e.source === 'allow-always' && (all || e.expiresAt === undefined || e.expiresAt > now));
        const lines = [...grants.map(grantLine), ...exec.map((e) => execGrantLine(e, now))];
        out(io, json, { grants, exec }, () => (lines.length ? lines.join('\n') : 'no grants'));
        return EXIT.ok;
      }
      case 'revoke': {
        const result = await approvals.revokeGrant(rest[0]!, `cli:${operator}`);
        if (result.kind === 'not-found' && (await new ExecAllowlistStore(store.db).remove(rest[0]!))) {
          out(io, json, { kind: 'revoked', exec: rest[0] }, () => `revoked exec grant ${rest[0]}`);
          return EXIT.ok;
        }
        if (result.kind === 'not-found') return fail(io, json, result, `no grant with id ${result.id}; see warden approvals grants --all`);
        out(io, json, result, () => (result.kind === 'revoked' ? `revoked ${grantLine(result.grant)}` : `already revoked: ${grantLine(result.grant)}`));
        return EXIT.ok;
      }
      case 'resolve': {
        const [id, raw] = rest as [string, string];
        const decision = DECISION_ALIASES[raw] ?? raw;
        const result = await approvals.resolveAsOperator(id, decision, operator);
        switch (result.kind) {
          case 'resolved':
            out(io, json, result, () => `resolved ${id}: ${result.request.status} by ${result.request.decidedBy}${result.grant ? ` (grant ${result.grant.id})` : ''}`);
            return EXIT.ok;
          case 'already-resolved':
            out(io, json, result, () => `already resolved ${id}: ${result.outcome}${result.decidedBy ? ` by ${result.decidedBy}` : ''}; nothing changed`);
            return EXIT.ok;
          case 'not-found':
            return fail(io, json, result, `no approval with id ${id}; see warden approvals list`);
          case 'decision-not-allowed':
            return fail(io, json, result, `decision "${raw}" is not offered by ${id}; allowed: ${result.allowed.join(', ')}`);
          case 'not-approver':
            return fail(io, json, result, result.reason);
        }
      }
    }
    return EXIT.badInput;
  } finally {
    approvals.shutdown();
    await store.close();
  }
};

function out(io: CliIO, json: boolean, value: unknown, human: () => string): void {
  io.stdout(json ? JSON.stringify(value, null, 2) : human());
}

function fail(io: CliIO, json: boolean, value: unknown, message: string): number {
  if (json) io.stdout(JSON.stringify({ ...(value as object), error: message }, null, 2));
  io.stderr(`warden approvals: ${message}`);
  return EXIT.badInput;
}

/** One request: what it runs (the command or arguments, on one line) and when it was asked and decided. */
export function requestLine(r: ApprovalRequest): string {
  const iso = (ms: number) => new Date(ms).toISOString();
  const when =
    r.status === 'pending'
      ? `expires ${iso(r.expiresAt)}`
      : `${r.status}${r.decidedBy ? ` by ${r.decidedBy}` : ''}${r.decidedAt !== undefined ? ` at ${iso(r.decidedAt)}` : ''}`;
  const what = r.preview.replace(/\s+/g, ' ').trim();
  return `${r.id}  ${r.kind}/${r.tool}  ${JSON.stringify(what.length > 120 ? `${what.slice(0, 119)}…` : what)}  asked ${iso(r.createdAt)}  [${r.sessionKey}]  ${when}`;
}

function grantLine(g: Grant): string {
  const state = g.revokedAt !== undefined ? `revoked by ${g.revokedBy}` : g.expiresAt !== undefined ? `expires ${new Date(g.expiresAt).toISOString()}` : 'no expiry';
  const scope = `${g.sessionKey !== undefined ? `  in conversation ${g.sessionKey}` : ''}${g.ruleKey !== undefined ? `  under rule ${g.ruleKey}` : ''}`;
  return `${g.id}  agent ${g.agentId}  ${g.tool}  ${g.pattern}${g.argPattern !== undefined ? ` args ${g.argPattern}` : ''}  ${bindingText(g.boundFiles)}${scope}  by ${g.createdBy}  ${state}`;
}

/** What a grant is bound to by content, as `warden approvals grants` shows it. */
export function bindingText(files: readonly BoundFile[] | undefined): string {
  if (files === undefined) return 'bound to no file (approved before content binding)';
  if (files.length === 0) return 'bound to no file';
  return `bound to ${files.map((f) => `${f.path} ${f.sha256 === null ? '(absent)' : `sha256:${f.sha256.slice(0, 12)}`}`).join(', ')}`;
}

function execGrantLine(e: StoredAllowlistEntry, now: number): string {
  const state = e.expiresAt === undefined ? 'no expiry' : `${e.expiresAt <= now ? 'expired' : 'expires'} ${new Date(e.expiresAt).toISOString()}`;
  const what = e.lastUsedCommand !== undefined ? `for ${JSON.stringify(e.lastUsedCommand)}` : e.argPattern !== undefined ? `args ${JSON.stringify(e.argPattern)}` : 'any arguments';
  return `${e.id}  agent ${e.agentId}  exec on ${e.executor}  ${e.pattern}  ${what}  ${bindingText(e.boundFiles)}  ${state}`;
}
