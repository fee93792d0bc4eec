// The rule step of the call chain (approvals.rules): what it adds to every tool call with 100
// rules configured, none of which matches (every rule is checked) and with the match at the last
// rule, for a call with ordinary arguments. Target: ≤ 20 µs per call.
import { approvalRuleFor, type RuleCall } from '../src/approvals/rules.js';
import { parseConfig } from '../src/config/index.js';
import { type Bench, fmtMs, measure } from './harness.js';

const bench: Bench = async (report) => {
  // A realistic mix: tool names, globs, groups, argument globs and linear regexes, conversation scopes.
  const rules: unknown[] = [];
  for (let i = 0; i < 99; i++) {
    switch (i % 5) {
      case 0: rules.push({ tool: `plugin${i}_tool`, match: { target: `team-${i}/*` } }); break;
      case 1: rules.push({ tools: ['write', 'edit'], match: { path: `deploy-${i}/*` } }); break;
      case 2: rules.push({ tool: `srv${i}__*` }); break;
      case 3: rules.push({ tool: 'exec', match: { command: `/^kubectl\\s+delete\\s+ns-${i}\\b/` } }); break;
      default: rules.push({ tool: 'group:web', where: { channel: `#ops-${i}` } });
    }
  }
  rules.push({ tool: 'message', match: { channel: '/^(#announcements|C9)$/' }, quorum: 2, approvers: ['role:1'] });
  const parsed = parseConfig({ approvals: { rules } });
  if (!parsed.ok) throw parsed.error;
  const config = parsed.value.config;
  const turn: RuleCall['turn'] = { provider: 'discord', agentId: 'main', guildId: 'G', channelId: 'C1', channelName: 'dev', senderId: 'U1' };
  const miss: RuleCall = { tool: 'write', params: { path: 'src/index.ts', content: 'x'.repeat(2000) }, turn };
  const last: RuleCall = { tool: 'message', params: { channel: '#announcements', text: 'Release 1.2 is out' }, turn };
  const exec: RuleCall = { tool: 'exec', params: { command: 'kubectl get pods -A && ls -la /srv/app' }, turn };
  if (approvalRuleFor(config, miss) !== undefined || approvalRuleFor(config, last)?.index !== 99) throw new Error('bench rules do not behave as intended');

  const N = 1000;
  for (const [name, c] of [['100 rules, none matches (write)', miss], ['100 rules, the last matches (message)', last], ['100 rules, 20 regexes run (exec)', exec]] as const) {
    const t = await measure(() => {
      for (let i = 0; i < N; i++) approvalRuleFor(config, c);
    }, { iterations: 50, warmup: 5 });
    report({ name: `rule check: ${name}`, value: fmtMs(t.median / N), note: `p99 ${fmtMs(t.p99 / N)} per call (target ≤ 20 µs)` });
  }
};

export default bench;
