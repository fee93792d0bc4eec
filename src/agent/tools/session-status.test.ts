import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApprovalService } from '../../approvals/service.js';
import { parseConfig } from '../../config/index.js';
import { EventBus } from '../../events/events.js';
import { log } from '../../log/log.js';
import type { TurnContext } from '../../policy/context.js';
import { openWardenStore } from '../../app/migrations.js';
import type { ToolCallContext } from '../../tools/types.js';
import { surfaceInputs } from '../../app/surface-inputs.js';
import { createSessionStatusTool, type SessionStatus } from './session-status.js';

const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'dm', senderId: 'me', senderIsOwner: true, spawnDepth: 0, model: 'anthropic/claude-sonnet-4-5' };
const ctx = (sessionKey: string): ToolCallContext => ({
  toolCallId: 'c',
  signal: new AbortController().signal,
  turn,
  sessionKey,
  workspaceDir: '/tmp',
  log,
  approvals: { request: async () => ({ id: '', outcome: 'cancelled' }) },
});

describe('session_status', () => {
  it('reports the session, agent, model, surface and its own pending approvals', async () => {
    const parsed = parseConfig({ tools: { profile: 'minimal' } });
    if (!parsed.ok) throw parsed.error;
    const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-status-')) });
    if (!opened.ok) throw new Error(opened.error.message);
    const approvals = new ApprovalService({ store: opened.store, config: parsed.value.config, events: new EventBus() });
    const mine = await approvals.open({ kind: 'exec', tool: 'exec', title: 'Run git status', preview: 'git status', fullText: 'git status' }, { agentId: 'main', sessionKey: 's-mine', provider: 'web' });
    await approvals.open({ kind: 'exec', tool: 'exec', title: 'Other', preview: 'ls', fullText: 'ls' }, { agentId: 'main', sessionKey: 's-other', provider: 'web' });
    const tool = createSessionStatusTool({ config: parsed.value.config, store: opened.store, surfaceOptions: surfaceInputs(parsed.value.config, '.') });
    const result = await tool.execute({}, ctx('s-mine'));
    const details = (result as { details: SessionStatus }).details;
    expect(details).toMatchObject({ sessionKey: 's-mine', agentId: 'main', provider: 'web', chat: 'dm', model: 'anthropic/claude-sonnet-4-5' });
    expect(details.pendingApprovals).toEqual([{ id: mine.id, tool: 'exec', title: 'Run git status', expiresAt: mine.expiresAt }]);
    expect(details.tools.ids).toContain('session_status');
    expect(details.tools.count).toBe(details.tools.ids.length);
    const text = (result as { content: Array<{ text: string }> }).content[0]!.text;
    expect(text).toContain('Session: s-mine');
    expect(text).toContain(`- ${mine.id} exec: Run git status (expires in 30 min)`);
    approvals.shutdown();
    await opened.store.close();
  });

  it('says when it cannot know the pending approvals', async () => {
    const parsed = parseConfig({});
    if (!parsed.ok) throw parsed.error;
    const result = await createSessionStatusTool({ config: parsed.value.config, surfaceOptions: surfaceInputs(parsed.value.config, '.') }).execute({}, ctx('s'));
    expect((result as { details: SessionStatus }).details.pendingApprovals).toBeNull();
  });
});
