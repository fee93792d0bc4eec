import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalOutcome, ApprovalRequestInput, ApprovalRequester } from '../../../approvals/types.js';
import { parseConfig } from '../../../config/index.js';
import { ProcessRegistry } from '../../../exec/process-registry.js';
import { log } from '../../../log/log.js';
import type { TurnContext } from '../../../policy/context.js';
import type { ToolCallContext, ToolResult } from '../../types.js';
import { createExecTool } from './exec.js';

/**
 * tools.elevated through the real exec tool under bubblewrap: a file outside the workspace is
 * visible on the gateway host and not in the sandbox, which tells where a command ran.
 */
let root: string;
let workspace: string;
let marker: string;
let registry: ProcessRegistry;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'warden-elevated-'));
  workspace = path.join(root, 'workspace');
  mkdirSync(workspace);
  marker = path.join(root, 'outside.txt');
  writeFileSync(marker, 'on the host');
  registry = new ProcessRegistry();
});
afterEach(() => {
  for (const job of registry.running()) job.killNow();
  rmSync(root, { recursive: true, force: true });
});

function setup(exec: Record<string, unknown> = {}, answer: ApprovalOutcome = 'allow-once') {
  const r = parseConfig({ tools: { exec: { host: 'sandbox', askFallback: 'full', ...exec }, elevated: { enabled: true, allowFrom: { discord: ['111'] } } } });
  if (!r.ok) throw r.error;
  const asked: ApprovalRequestInput[] = [];
  const approvals: ApprovalRequester = {
    request: async (input) => {
      asked.push(input);
      return { id: 'a1', outcome: answer, decidedBy: 'approver' };
    },
  };
  const tool = createExecTool({ config: r.value.config, registry, hasBwrap: true, killGraceMs: 200 });
  const run = async (args: { command: string; elevated?: boolean }, turn: Partial<TurnContext> = {}) => {
    const ctx: ToolCallContext = {
      toolCallId: 't',
      signal: new AbortController().signal,
      turn: { agentId: 'main', provider: 'discord', chat: 'channel', channelId: 'c', senderId: '111', senderIsOwner: false, spawnDepth: 0, ...turn },
      sessionKey: 'agent:main:discord:channel:c',
      workspaceDir: workspace,
      log,
      approvals,
    };
    const result = (await tool.execute(args, ctx)) as ToolResult;
    return { result, text: (result.content[0] as { text: string }).text };
  };
  return { run, asked };
}

describe('exec with elevated: true', () => {
  it('without elevated the command stays in the sandbox, which cannot see the host file', async () => {
    const { run } = setup({ allowlist: [{ pattern: '/usr/bin/cat' }] });
    const { text } = await run({ command: `cat ${marker}` });
    expect(text).not.toContain('on the host');
  });

  it('a named sender runs it on the gateway host after an approver allows it once', async () => {
    const { run, asked } = setup();
    const { result, text } = await run({ command: `cat ${marker}`, elevated: true });
    expect(result.isError, text).toBeFalsy();
    expect(text).toContain('on the host');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.title).toBe('Run a command on the gateway host (elevated)');
    expect(asked[0]!.allowedDecisions).toEqual(['allow-once', 'deny']);
    expect(asked[0]!.facts).toEqual(expect.arrayContaining([{ label: 'Runs in', value: `${workspace} (gateway host, ELEVATED)` }]));
  });

  it('asks even when the allowlist covers the command', async () => {
    const { run, asked } = setup({ allowlist: [{ pattern: '/usr/bin/cat' }], security: 'full', ask: 'off' });
    await run({ command: `cat ${marker}`, elevated: true });
    expect(asked).toHaveLength(1);
  });

  it.each<[ApprovalOutcome, string]>([
    ['deny', 'elevated exec not run: the approval was denied. Do not retry this command.'],
    ['expired', 'elevated exec not run: the approval was expired. Do not retry this command.'],
    ['cancelled', 'elevated exec not run: the approval was cancelled. Do not retry this command.'],
  ])('%s never runs it, whatever askFallback says', async (outcome, message) => {
    const { run } = setup({}, outcome);
    const { result, text } = await run({ command: `cat ${marker}`, elevated: true });
    expect(result.isError).toBe(true);
    expect(text).toBe(message);
  });

  it.each<[string, Partial<TurnContext>, string]>([
    ['a sender not named', { senderId: '999' }, 'sender 999 is not in tools.elevated.allowFrom.discord'],
    ['a subagent of a named sender', { spawnDepth: 1 }, 'a subagent cannot run elevated commands'],
    ['a scheduled job', { senderId: 'cron:job1' }, 'only a person named in tools.elevated.allowFrom can ask for elevated commands'],
  ])('%s is refused before any card is shown', async (_name, turn, why) => {
    const { run, asked } = setup();
    const { text } = await run({ command: `cat ${marker}`, elevated: true }, turn);
    expect(text).toBe(`elevated exec refused: ${why}. Run it without elevated (in the sandbox) or ask an operator.`);
    expect(asked).toHaveLength(0);
  });

  it('security: deny still denies', async () => {
    const { run, asked } = setup({ security: 'deny' });
    const { text } = await run({ command: `cat ${marker}`, elevated: true });
    expect(text).toMatch(/^exec denied/);
    expect(asked).toHaveLength(0);
  });
});
