import { describe, expect, it, vi } from 'vitest';
import type { ToolExecutor } from '../agent/index.js';
import type { ApprovalRequest } from '../approvals/types.js';
import {
  COMMAND_NAMES,
  describeClickOutcome,
  formatToolExplanation,
  formatToolReport,
  formatToolResult,
  helpText,
  isCommand,
  outcomeLabel,
  parseApproveArgs,
  parseCommand,
  runCommand,
  runsImmediately,
  type CommandDeps,
  type ToolReport,
} from './commands.js';
import type { Route } from './router.js';
import { surface as policySurface } from '../policy/testing.js';

describe('parseCommand', () => {
  it.each([
    ['/tools', { name: 'tools', args: '' }],
    ['  /TOOLS  ', { name: 'tools', args: '' }],
    ['/exec ls -la /tmp', { name: 'exec', args: 'ls -la /tmp' }],
    ['/exec echo "a\nb"', { name: 'exec', args: 'echo "a\nb"' }],
    ['/warden exec git status', { name: 'exec', args: 'git status' }],
    ['/approve abc allow-once', { name: 'approve', args: 'abc allow-once' }],
    ['/stop', { name: 'stop', args: '' }],
    ['/unknown thing', undefined],
    ['tools', undefined],
    ['please /tools', undefined],
    ['/toolsx', undefined],
  ])('%j', (text, parsed) => {
    expect(parseCommand(text)).toEqual(parsed);
    expect(isCommand(text)).toBe(parsed !== undefined);
  });

  it.each([
    ['exec', false],
    ['stop', true],
    ['approve', true],
    ['tools', true],
  ] as const)('%s runs immediately: %s', (name, immediate) => {
    expect(runsImmediately(name)).toBe(immediate);
  });
});

describe('parseApproveArgs', () => {
  it.each([
    ['a1 allow-once', { ok: true, id: 'a1', decision: 'allow-once' }],
    ['a1 always', { ok: true, id: 'a1', decision: 'allow-always' }],
    ['a1 ALLOW-ALWAYS', { ok: true, id: 'a1', decision: 'allow-always' }],
    ['a1 once', { ok: true, id: 'a1', decision: 'allow-once' }],
    ['a1 deny', { ok: true, id: 'a1', decision: 'deny' }],
    ['a1', { ok: false, message: 'usage: /approve <id> allow-once|allow-conversation|allow-timed|allow-always|deny' }],
    ['a1 yes', { ok: false, message: 'unknown decision "yes"; usage: /approve <id> allow-once|allow-conversation|allow-timed|allow-always|deny' }],
    ['a1 deny now', { ok: false, message: 'usage: /approve <id> allow-once|allow-conversation|allow-timed|allow-always|deny' }],
  ])('%j', (args, out) => {
    expect(parseApproveArgs(args)).toEqual(out);
  });
});

const report: ToolReport = {
  tools: ['read', 'exec', 'cron'],
  removed: [
    { tool: 'browser', by: 'tools.profile' },
    { tool: 'gateway', by: 'owner-only' },
    { tool: 'nodes', by: 'owner-only' },
  ],
  unavailable: [{ tool: 'image', why: 'no image model configured' }],
  warnings: [],
};

describe('formatToolReport', () => {
  it('lists tools sorted and says why others are missing', () => {
    expect(formatToolReport(report, true)).toBe(
      [
        'Your tools here (3): cron, exec, read',
        '',
        'Not here:',
        '• browser — removed by tools.profile',
        '• gateway — removed by owner-only',
        '• nodes — removed by owner-only',
        '• image — unavailable: no image model configured',
      ].join('\n'),
    );
  });

  it('never names owner-only tools to a non-owner', () => {
    const text = formatToolReport({ ...report, tools: ['read'], removed: [...report.removed, { tool: 'cron', by: 'owner-only' }] }, false);
    expect(text).not.toMatch(/cron|gateway|nodes|owner/);
    expect(text).not.toMatch(/\d+ owner/);
  });
});

describe('outcome wording', () => {
  it.each([
    [{ status: 'allow-once', decidedBy: 'alice' }, 'Allowed once by alice'],
    [{ status: 'allow-always', decidedBy: 'bob' }, 'Allowed always by bob'],
    [{ status: 'deny', decidedBy: 'bob' }, 'Denied by bob'],
    [{ status: 'expired' }, 'Expired'],
  ] as const)('%j → %s', (req, label) => {
    expect(outcomeLabel(req)).toBe(label);
  });

  it('answers each click outcome', () => {
    const request = { status: 'allow-once', decidedBy: 'alice' } as ApprovalRequest;
    expect(describeClickOutcome({ kind: 'resolved', request }, 'x1')).toBe('Approval x1: Allowed once by alice.');
    expect(describeClickOutcome({ kind: 'already-resolved', request }, 'x1')).toBe('Approval x1 was already resolved: Allowed once by alice.');
    // Named as the card names them: "you" in the web chat, a mention on Discord.
    expect(describeClickOutcome({ kind: 'resolved', request: { status: 'deny', decidedBy: 'web:local', provider: 'web' } as ApprovalRequest }, 'x1')).toBe('Approval x1: Denied by you.');
    expect(describeClickOutcome({ kind: 'already-resolved', request: { status: 'deny', decidedBy: 'discord:42', provider: 'discord' } as ApprovalRequest }, 'x1')).toBe('Approval x1 was already resolved: Denied by <@42>.');
    expect(describeClickOutcome({ kind: 'not-approver' }, 'x1')).toBe('You are not allowed to decide approvals.');
    expect(describeClickOutcome({ kind: 'not-found' }, 'x1')).toMatch(/No approval x1 is pending/);
    expect(describeClickOutcome({ kind: 'decision-not-allowed', allowed: ['allow-once', 'deny'] }, 'x1')).toBe(
      'Approval x1 does not offer that decision; it offers allow-once, deny.',
    );
  });
});

describe('formatToolResult', () => {
  it('keeps output in one balanced code block', () => {
    const out = formatToolResult({ content: [{ type: 'text', text: 'a ``` b\n' }] });
    expect(out.text.match(/```/g)?.length).toBe(2);
    expect(formatToolResult({ content: [] }).text).toContain('(no output)');
    expect(formatToolResult({ content: [{ type: 'text', text: 'boom' }], isError: true }).text).toMatch(/^exec failed:/);
  });
});

function route(over: Partial<Route['context']> = {}): Route {
  return {
    agentId: 'main',
    sessionKey: 'agent:main:discord:channel:1',
    text: '',
    replyTo: { provider: 'discord', channelId: '1' },
    context: { agentId: 'main', provider: 'discord', chat: 'channel', channelId: '1', senderId: 'u1', senderIsOwner: false, spawnDepth: 0, ...over },
  };
}

function deps(over: Partial<CommandDeps> = {}): CommandDeps {
  return {
    toolReport: () => report,
    tools: undefined,
    approve: async () => ({ kind: 'not-found' }),
    skills: () => undefined,
    status: () => ({ model: undefined, running: false, queued: 0, pendingApprovals: 0, adapters: ['web'], uptimeMs: 65_000 }),
    stop: () => false,
    newCallId: () => 'call-1',
    ...over,
  };
}

const signal = new AbortController().signal;

describe('runCommand', () => {
  it('/exec refuses when exec is not on the surface, naming the step', async () => {
    const execute = vi.fn();
    const tools: ToolExecutor = { surface: () => ({ ok: true, tools: [] }), execute };
    const out = await runCommand(
      { name: 'exec', args: 'ls' },
      route(),
      deps({ tools, toolReport: () => ({ ...report, tools: ['read'], removed: [{ tool: 'exec', by: 'group tools.allow' }] }) }),
      signal,
    );
    expect(out.text).toBe('exec is not available here: removed by group tools.allow.');
    expect(execute).not.toHaveBeenCalled();
  });

  it('/exec goes through the call path with the turn context and surface', async () => {
    const execute = vi.fn(async () => ({ content: [{ type: 'text' as const, text: 'hi' }] }));
    const tools: ToolExecutor = {
      surface: () => ({ ok: true, tools: [{ id: 'exec', description: '', parameters: {} }] }),
      execute,
    };
    const r = route();
    const out = await runCommand({ name: 'exec', args: 'echo hi' }, r, deps({ tools }), signal);
    expect(out.text).toBe('```\nhi\n```');
    expect(execute).toHaveBeenCalledWith(
      { toolCallId: 'call-1', tool: 'exec', args: { command: 'echo hi' } },
      { sessionKey: r.sessionKey, turn: r.context, signal, surface: ['exec'], via: 'command', deferApprovals: true },
    );
  });

  it('/exec whose approval is still undecided says so in people\'s words, not the model\'s', async () => {
    const execute = vi.fn(async () => ({ content: [{ type: 'text' as const, text: 'pending approval a1: …' }], details: { status: 'pending', approvalId: 'a1' } }));
    const tools: ToolExecutor = { surface: () => ({ ok: true, tools: [{ id: 'exec', description: '', parameters: {} }] }), execute };
    const out = await runCommand({ name: 'exec', args: 'make deploy' }, route(), deps({ tools }), signal);
    expect(out.text).toBe('Approval a1 is pending: the command runs when an approver decides, and its result will be posted under the card.');
  });

  it('/exec with no command prints usage', async () => {
    expect((await runCommand({ name: 'exec', args: '' }, route(), deps(), signal)).text).toBe('usage: /exec <command>');
  });

  it('/approve passes the sender as the clicker', async () => {
    const approve = vi.fn(async () => ({ kind: 'not-approver' as const }));
    const out = await runCommand({ name: 'approve', args: 'a7 deny' }, route({ senderId: 'u9' }), deps({ approve }), signal);
    expect(approve).toHaveBeenCalledWith({ approvalId: 'a7', decision: 'deny', userId: 'u9' });
    expect(out.text).toBe('You are not allowed to decide approvals.');
  });

  it('/stop reports whether a turn was stopped', async () => {
    const stop = vi.fn(() => true);
    expect((await runCommand({ name: 'stop', args: '' }, route(), deps({ stop }), signal)).text).toBe('Stopped the running turn.');
    expect(stop).toHaveBeenCalledWith('agent:main:discord:channel:1');
    expect((await runCommand({ name: 'stop', args: '' }, route(), deps(), signal)).text).toBe('Nothing is running in this conversation.');
  });

  it('/skills with none says how to add them', async () => {
    expect((await runCommand({ name: 'skills', args: '' }, route(), deps(), signal)).text).toMatch(/^No skills yet/);
  });

  it('/status shows agent, session, model and queue', async () => {
    const text = (await runCommand({ name: 'status', args: '' }, route(), deps(), signal)).text;
    expect(text).toContain('Session: agent:main:discord:channel:1');
    expect(text).toContain('Model: none configured');
    expect(text).toContain('Up: 1m 5s');
  });

  it('/help without a model says how to add one', async () => {
    expect((await runCommand({ name: 'help', args: '' }, route(), deps(), signal)).text).toContain('models.default');
    expect((await runCommand({ name: 'help', args: '' }, route({ model: 'openai/gpt-5' }), deps(), signal)).text).not.toContain('models.default');
  });
});

describe('/tools --explain TOOL', () => {
  // The report the running bot builds: the surface of this conversation, its trace included.
  const reportFor = (raw: Record<string, unknown>, ctx: Record<string, unknown>): ToolReport => {
    const s = policySurface(raw, ctx);
    return { tools: s.tools, removed: s.removed, unavailable: s.unavailable, warnings: s.warnings, trace: s.trace };
  };
  const raw = { tools: { allow: ['read', 'write', 'gateway', 'cron'] }, channels: { discord: { token: 't', guilds: { '111': { tools: { deny: ['write'] } } } } } };
  const at = { provider: 'discord', chat: 'channel', guildId: '111', channelId: '5', channelName: 'general' };

  it.each([
    ['names the wider deny with its config key', '--explain write', false, ['write: removed by channels.discord.guilds.111.tools.deny', '• group tools.allow: removed — denied by channels.discord.guilds.111.tools.deny[0] = "write"']],
    ['a tool the model gets', '--explain read', false, ['read: the model gets it']],
    ["a non-owner's allowlist quote loses owner-only names", '--explain exec', false, ['• tools.allow: removed — not in the allowlist tools.allow [read, write]']],
    ['an owner sees the allowlist whole', '--explain exec', true, ['• tools.allow: removed — not in the allowlist tools.allow [read, write, gateway, cron]']],
    ['an owner-only tool, to a non-owner: as an unknown name', '--explain cron', false, ['No tool "cron" is known here. usage: /tools [--explain TOOL]']],
    ['an unknown name', '--explain nope', false, ['No tool "nope" is known here. usage: /tools [--explain TOOL]']],
    ['other arguments', 'everything', false, ['usage: /tools [--explain TOOL]']],
  ] as const)('%s', (_what, args, owner, lines) => {
    const text = formatToolExplanation(args, reportFor(raw, { ...at, senderIsOwner: owner, senderId: owner ? '1' : '2' }), owner);
    for (const line of lines) expect(text.split('\n')).toContain(line);
    if (!owner && !text.startsWith('No tool')) expect(text).not.toMatch(/\b(gateway|cron|nodes)\b/);
  });
});
