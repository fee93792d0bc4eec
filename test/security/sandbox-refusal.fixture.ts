// Plays a Warden on a host that refuses user namespaces (see sandbox-refusal.test.ts): one exec
// call on the sandbox host, reported as JSON.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../src/config/index.js';
import { log } from '../../src/log/log.js';
import { createExecTool } from '../../src/tools/core/exec/exec.js';
import type { ToolResult } from '../../src/tools/types.js';

const parsed = parseConfig({ tools: { exec: { host: 'sandbox', security: 'full', ask: 'off' } } });
if (!parsed.ok) throw parsed.error;
const workspace = mkdtempSync(path.join(tmpdir(), 'warden-refusal-'));
const exec = createExecTool({ config: parsed.value.config, hasBwrap: true });
const result = (await exec.execute(
  { command: `touch ${workspace}/ran` },
  {
    toolCallId: 'c',
    signal: new AbortController().signal,
    turn: { agentId: 'main', provider: 'web', chat: 'dm', senderIsOwner: true, spawnDepth: 0 },
    sessionKey: 'agent:main:web:direct:local',
    workspaceDir: workspace,
    log,
    approvals: { request: () => Promise.reject(new Error('never asks')) },
  },
)) as ToolResult;
const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
process.stdout.write(`${JSON.stringify({ uid: process.getuid?.(), isError: result.isError === true, text, ran: existsSync(path.join(workspace, 'ran')) })}\n`);
