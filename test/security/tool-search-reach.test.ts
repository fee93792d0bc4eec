import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import { parseConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { GovernedToolExecutor } from '../../src/app/tool-executor.js';
import type { TurnContext } from '../../src/policy/context.js';
import { openWardenStore } from '../../src/app/migrations.js';

/**
 * Attack class: reaching a tool the policy removed through Tool Search. tool_search and
 * tool_call only see the turn's authorized surface; spellings, aliases, groups and globs in the
 * id never widen it, and a channel's deny holds for a call made through tool_call.
 */
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function executor(tools: Record<string, unknown>, channels: Record<string, unknown> = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-ts-sec-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), models: { default: 'openai/gpt-5' }, owners: { discord: ['owner'] }, tools, channels });
  if (!parsed.ok) throw parsed.error;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const events = new EventBus();
  const approvals = new ApprovalService({ store: opened.store, config: parsed.value.config, events });
  cleanups.push(() => opened.store.close(), () => approvals.shutdown());
  return new GovernedToolExecutor(parsed.value.config, { config: parsed.value.config, baseDir: dir, store: opened.store }, { approvals, events });
}

const general: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', guildId: 'g', channelId: '1', channelName: 'general', senderId: 'member', senderIsOwner: false, spawnDepth: 0, model: 'openai/gpt-5' };

async function via(ex: GovernedToolExecutor, tool: string, args: Record<string, unknown>, turn = general) {
  const surface = await ex.surface(turn);
  if (!surface.ok) throw new Error(surface.message);
  const result = await ex.execute({ toolCallId: 'c', tool, args }, { sessionKey: 'agent:main:discord:channel:1', turn, signal: new AbortController().signal, surface: surface.tools.map((t) => t.id) });
  return { result, text: result.content.map((c) => (c.type === 'text' ? c.text : '')).join('') };
}

describe('tool_call cannot reach what the policy removed', () => {
  const channelDeny = { discord: { guilds: { g: { channels: { general: { tools: { deny: ['memory_search', 'web_fetch'] } } } } } } };

  it.each(['memory_search', 'MEMORY_SEARCH', ' memory_search ', 'memory_*', 'group:memory', 'web_fetch'])('id %j in a channel that denies it', async (id) => {
    const ex = await executor({ profile: 'coding', toolSearch: true }, channelDeny);
    const { result } = await via(ex, 'tool_call', { id, args: { query: 'x' } });
    expect(result.isError).toBe(true);
    const found = JSON.parse((await via(ex, 'tool_search', { query: 'memory search notes fetch page' })).text) as Array<{ id: string }>;
    expect(found.map((f) => f.id)).not.toEqual(expect.arrayContaining(['memory_search']));
    expect(found.map((f) => f.id)).not.toContain('web_fetch');
  });

  it.each(['cron', 'automations', 'gateway', 'nodes'])('owner-only %s for a non-owner, even by alias', async (id) => {
    const ex = await executor({ profile: 'full', toolSearch: true });
    const { result, text } = await via(ex, 'tool_call', { id, args: {} });
    expect(result.isError).toBe(true);
    expect(text).toContain('no tool');
  });

  it('tool_describe reveals nothing outside the surface', async () => {
    const ex = await executor({ profile: 'full', toolSearch: true });
    const { result } = await via(ex, 'tool_describe', { id: 'cron' });
    expect(result.isError).toBe(true);
  });

  it('a meta tool cannot call another meta tool to launder a call', async () => {
    const ex = await executor({ profile: 'coding', toolSearch: true }, channelDeny);
    const { result } = await via(ex, 'tool_call', { id: 'tool_call', args: { id: 'memory_search', args: { query: 'x' } } });
    expect(result.isError).toBe(true);
  });
});
