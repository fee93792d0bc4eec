import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalOutcome, ApprovalRequestInput, ApprovalRequester } from '../../src/approvals/types.js';
import { parseConfig } from '../../src/config/index.js';
import { ProcessRegistry } from '../../src/exec/process-registry.js';
import { log } from '../../src/log/log.js';
import type { TurnContext } from '../../src/policy/context.js';
import { createExecTool } from '../../src/tools/core/exec/exec.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';

/**
 * Attack class: escaping the sandbox through tools.elevated. A channel member who is not
 * named, a model acting for a named sender through a subagent or schedule, a spoofed display
 * name, an approval that never comes, or an env override must not get a command onto the
 * gateway host. Runs the real exec tool under bubblewrap as root; a file outside the workspace
 * tells where a command ran.
 */
let root: string;
let workspace: string;
let marker: string;
let registry: ProcessRegistry;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'warden-elev-sec-'));
  workspace = path.join(root, 'ws');
  mkdirSync(workspace);
  marker = path.join(root, 'host-only.txt');
  writeFileSync(marker, 'HOST-SECRET');
  registry = new ProcessRegistry();
});
afterEach(() => {
  for (const job of registry.running()) job.killNow();
  rmSync(root, { recursive: true, force: true });
});

function tool(outcome: ApprovalOutcome, exec: Record<string, unknown> = {}) {
  const r = parseConfig({ tools: { exec: { host: 'sandbox', security: 'full', ask: 'off', askFallback: 'full', ...exec }, elevated: { allowFrom: { discord: ['111'], slack: ['U111'] } } } });
  if (!r.ok) throw r.error;
  const asked: ApprovalRequestInput[] = [];
  const approvals: ApprovalRequester = { request: async (input) => (asked.push(input), { id: 'x', outcome, decidedBy: 'approver' }) };
  const impl = createExecTool({ config: r.value.config, registry, hasBwrap: true, killGraceMs: 200 });
  const run = async (args: Record<string, unknown>, turn: Partial<TurnContext>) => {
    const ctx: ToolCallContext = {
      toolCallId: 't',
      signal: new AbortController().signal,
      turn: { agentId: 'main', provider: 'discord', chat: 'channel', channelId: 'c', senderId: '111', senderIsOwner: false, spawnDepth: 0, ...turn },
      sessionKey: 's',
      workspaceDir: workspace,
      log,
      approvals,
    };
    const result = (await impl.execute(args as never, ctx)) as ToolResult;
    return (result.content[0] as { text: string }).text;
  };
  return { run, asked };
}

describe('elevated exec as an attacker would try it', () => {
  it.each<[string, Partial<TurnContext>]>([
    ['a member who is not named', { senderId: '999' }],
    ['a member whose display name is the named id', { senderId: '999', senderName: '111', senderUsername: '111' }],
    ['the named id on a platform where it is not named', { provider: 'web', senderId: '111' }],
    ['a subagent started by the named sender', { spawnDepth: 1 }],
    ['a subagent that claims depth 0 but carries an inherited ceiling', { inherited: { deny: [] } }],
    ['a scheduled job', { senderId: 'cron:nightly' }],
    ['a relayed session turn', { senderId: 'session:agent:main:discord:channel:x' }],
  ])('%s cannot run on the host', async (_name, turn) => {
    const { run, asked } = tool('allow-once');
    const text = await run({ command: `cat ${marker}`, elevated: true }, turn);
    expect(text).not.toContain('HOST-SECRET');
    expect(text).toMatch(/^elevated exec refused/);
    expect(asked).toHaveLength(0);
  });

  it.each<ApprovalOutcome>(['deny', 'expired', 'cancelled', 'interrupted', 'allow-always', 'bogus' as ApprovalOutcome])('an approval that ends %s never runs it, even with security full and askFallback full', async (outcome) => {
    const { run } = tool(outcome);
    expect(await run({ command: `cat ${marker}`, elevated: true }, {})).not.toContain('HOST-SECRET');
  });

  it('the card is shown even for a command security: full would run unasked, and offers no allow-always', async () => {
    const { run, asked } = tool('allow-once');
    expect(await run({ command: `cat ${marker}`, elevated: true }, {})).toContain('HOST-SECRET');
    expect(asked[0]!.allowedDecisions).toEqual(['allow-once', 'deny']);
  });

  it('loader overrides are refused before anything else', async () => {
    const { run, asked } = tool('allow-once');
    const text = await run({ command: 'true', elevated: true, env: { LD_PRELOAD: '/tmp/x.so' } }, {});
    expect(text).toMatch(/LD_PRELOAD/);
    expect(asked).toHaveLength(0);
  });

  it.each(['name:Bob', 'username:bob', '*'])('allowFrom %s is refused at load time', (entry) => {
    const r = parseConfig({ tools: { elevated: { allowFrom: { discord: [entry] } } } });
    expect(r.ok).toBe(false);
  });
});
