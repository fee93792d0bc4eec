import type { BeforeToolCallResult, HookToolContext, WardenPluginApi } from 'warden/plugin';

/**
 * exec-guard: before_tool_call rules from the plugin's config. A rule matches a shell command
 * (exec's `command`, and text typed into a running job with `process`) by a regular expression
 * or by substrings, in the conversations it names, and either blocks the call or asks an
 * approver. A command whose text is built at run time cannot be judged by a pattern; where any
 * rule applies it gets `obfuscated` (default: approve).
 *
 * This narrows what exec may do; it never widens it: the exec allowlist, the sandbox and exec's
 * own approvals still apply to every command this guard lets through.
 */

export interface ExecGuardRule {
  id?: string;
  pattern?: string;
  contains?: string[];
  action: 'deny' | 'approve';
  channels?: string[];
  providers?: string[];
  guilds?: string[];
  reason?: string;
  severity?: 'info' | 'warning' | 'critical';
}

export interface ExecGuardConfig {
  rules: ExecGuardRule[];
  obfuscated: 'approve' | 'deny' | 'allow';
}

interface CompiledRule extends ExecGuardRule {
  label: string;
  test: (text: string) => boolean;
}

/**
 * What makes a command's text something else at run time, or runs text as a command: expansions
 * and substitutions, escapes, decoders, here-documents, sourcing, and the carriers that run
 * their input or arguments (`| sh`, `xargs`, `find -exec`, `python -c`, …).
 */
const OBFUSCATION =
  /[`$]|\\x[0-9a-f]{2}|\\[0-7]{3}|\b(?:eval|base64|xxd|openssl\s+enc|rev|tr|xargs|source)\b|<<|(?:^|[;&|\s])\.\s|\|\s*(?:sudo\s+)?(?:ba|da|z|k|fi)?sh\b|-exec(?:dir)?\b|-ok(?:dir)?\b|\b(?:python[0-9.]*|perl|ruby|node|php)\s+-[ceE]\b/i;

/**
 * Rules are compiled with `api.compileRegex` (Warden's linear-time engine): the text is the
 * model's, and a backtracking regex can stall the bot on one long command. A command longer
 * than a pattern's budget counts as matching it: a guard that cannot read the text must not
 * let it through.
 */
export function compileRules(config: ExecGuardConfig, compileRegex: WardenPluginApi['compileRegex']): CompiledRule[] {
  return config.rules.map((rule, i) => {
    const label = rule.id ?? `rules[${i}]`;
    let regex: ((text: string) => boolean) | undefined;
    if (rule.pattern !== undefined) {
      const compiled = compileRegex(rule.pattern, 'i');
      if (!compiled.ok) throw new Error(`exec-guard ${label}: pattern ${compiled.error}`);
      regex = (text) => compiled.regex.test(text) !== false;
    }
    const needles = (rule.contains ?? []).map((c) => c.toLowerCase());
    return { ...rule, label, test: (text) => (regex ? regex(text) : false) || needles.some((n) => text.toLowerCase().includes(n)) };
  });
}

/** The command as written, and with quotes, backslashes and repeated blanks taken out (`ss""h p\rod` is `ssh prod`). */
export function variants(command: string): string[] {
  const plain = command.replace(/["'\\]/g, '').replace(/\s+/g, ' ').trim();
  return plain === command ? [command] : [command, plain];
}

export function inScope(rule: ExecGuardRule, ctx: HookToolContext): boolean {
  const where = ctx.conversation;
  if (rule.providers && !rule.providers.includes(where?.provider ?? '')) return false;
  if (rule.guilds && !rule.guilds.includes(where?.guildId ?? '')) return false;
  if (rule.channels) {
    const names = (where?.chat === 'dm' ? ['dm'] : [where?.channelId, where?.channelName, where?.channelName ? `#${where.channelName}` : undefined])
      .filter((x): x is string => !!x)
      .map((x) => x.toLowerCase());
    if (!rule.channels.some((c) => c === '*' || names.includes(c.trim().toLowerCase()))) return false;
  }
  return true;
}

/** The shell text a call would run: exec's command, or what `process` types into a job. */
export function shellText(toolName: string, params: Record<string, unknown>): { text: string; opaque: boolean } | undefined {
  if (toolName === 'exec') return typeof params.command === 'string' ? { text: params.command, opaque: false } : undefined;
  if (toolName !== 'process') return undefined;
  const parts = [params.data, params.literal, params.text].filter((p): p is string => typeof p === 'string');
  // Raw bytes could be anything; they count as text the guard cannot read.
  const opaque = Array.isArray(params.hex) && params.hex.length > 0;
  if (parts.length === 0 && !opaque) return undefined;
  return { text: parts.join('\n'), opaque };
}

export function decide(rules: readonly CompiledRule[], config: ExecGuardConfig, toolName: string, params: Record<string, unknown>, ctx: HookToolContext): BeforeToolCallResult | undefined {
  const shell = shellText(toolName, params);
  if (!shell) return undefined;
  const scoped = rules.filter((r) => inScope(r, ctx));
  if (scoped.length === 0) return undefined;
  const texts = variants(shell.text);
  const matched = scoped.filter((r) => texts.some((t) => r.test(t)));
  const where = ctx.conversation?.channelName ? ` in #${ctx.conversation.channelName}` : ctx.conversation?.chat === 'dm' ? ' in a DM' : '';
  const deny = matched.find((r) => r.action === 'deny');
  if (deny) return { block: true, blockReason: `exec-guard: ${deny.reason ?? `this command matches rule ${deny.label}`}${where}. The command did not run; do not retry it.` };
  const approve = matched.find((r) => r.action === 'approve');
  if (approve) {
    return {
      requireApproval: {
        title: `exec-guard: ${approve.reason ?? `rule ${approve.label}`}`,
        description: `${toolName === 'exec' ? 'Command' : 'Input to a running job'}${where}:\n${shell.text}`,
        severity: approve.severity ?? 'warning',
      },
    };
  }
  if (config.obfuscated !== 'allow' && (shell.opaque || OBFUSCATION.test(shell.text))) {
    const why = 'the command builds its text at run time, so exec-guard cannot tell whether a rule matches';
    if (config.obfuscated === 'deny') return { block: true, blockReason: `exec-guard: ${why}${where}. Write the command out plainly.` };
    return { requireApproval: { title: 'exec-guard: command not readable', description: `${why}${where}:\n${shell.text}`, severity: 'warning' } };
  }
  return undefined;
}

export function register(api: WardenPluginApi): void {
  const config = api.config as unknown as ExecGuardConfig;
  // A bad pattern stops the plugin from loading (reported by `warden plugins`), rather than guarding nothing.
  const rules = compileRules(config, api.compileRegex);
  api.on('before_tool_call', (event, ctx) => decide(rules, config, event.toolName, event.params, ctx), { toolMatcher: ['exec', 'process'], priority: 100 });
  api.logger.info(`exec-guard: ${rules.length} rule(s)`);
}
