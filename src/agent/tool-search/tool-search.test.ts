import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../approvals/service.js';
import { parseConfig } from '../../config/index.js';
import { EventBus } from '../../events/events.js';
import { GovernedToolExecutor } from '../../app/tool-executor.js';
import type { TurnContext } from '../../policy/context.js';
import { openWardenStore } from '../../app/migrations.js';
import { rankTools, signature } from './rank.js';
import { toolSearchSettings } from './settings.js';

/** tools.toolSearch through the governed executor: the model finds deferred tools and calls them through the same chain. */
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(tools: Record<string, unknown>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-toolsearch-'));
  mkdirSync(path.join(dir, 'workspace'));
  mkdirSync(path.join(dir, 'workspace', 'memory'));
  writeFileSync(path.join(dir, 'workspace', 'MEMORY.md'), '# Memory\n\nThe deploy password is rotated weekly.\n');
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), models: { default: 'openai/gpt-5' }, tools });
  if (!parsed.ok) throw parsed.error;
  const { config } = parsed.value;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const events = new EventBus();
  const approvals = new ApprovalService({ store: opened.store, config, events });
  cleanups.push(() => opened.store.close(), () => approvals.shutdown());
  const executor = new GovernedToolExecutor(config, { config, baseDir: dir, store: opened.store }, { approvals, events });
  const turn = (over: Partial<TurnContext> = {}): TurnContext => ({ agentId: 'main', provider: 'web', chat: 'dm', senderId: 'u', senderIsOwner: false, spawnDepth: 0, model: 'openai/gpt-5', ...over });
  const call = async (tool: string, args: Record<string, unknown>, t = turn()) => {
    const surface = await executor.surface(t);
    if (!surface.ok) throw new Error(surface.message);
    const result = await executor.execute({ toolCallId: 'c', tool, args }, { sessionKey: 'agent:main:web:direct:u', turn: t, signal: new AbortController().signal, surface: surface.tools.map((d) => d.id) });
    return { result, text: result.content.map((c) => (c.type === 'text' ? c.text : '')).join('') };
  };
  return { executor, turn, call };
}

describe('tools.toolSearch settings', () => {
  const settings = (toolSearch: unknown) => {
    const r = parseConfig({ tools: { toolSearch } });
    if (!r.ok) throw r.error;
    return toolSearchSettings(r.value.config);
  };
  it.each([
    [false, undefined],
    [{ enabled: false }, undefined],
    [{ mode: 'tools' }, { mode: 'tools', defaultLimit: 8, maxLimit: 20 }],
    [{ mode: 'directory' }, { mode: 'directory', defaultLimit: 8, maxLimit: 20 }],
    // OpenClaw's code bridge is not there; OpenClaw itself falls back to tools mode without it.
    [true, { mode: 'tools', defaultLimit: 8, maxLimit: 20 }],
    [{ mode: 'code', codeTimeoutMs: 10_000, searchDefaultLimit: 8, maxSearchLimit: 200 }, { mode: 'tools', defaultLimit: 8, maxLimit: 50 }],
  ])('%j', (raw, expected) => {
    expect(settings(raw)).toEqual(expected);
  });
});

describe('Tool Search through the governed executor', () => {
  it('shows the coding primitives directly and the rest through tool_search, tool_describe and tool_call', async () => {
    const { executor, turn } = await setup({ profile: 'coding', toolSearch: { mode: 'tools' } });
    const surface = await executor.surface(turn());
    if (!surface.ok) throw new Error(surface.message);
    const ids = surface.tools.map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining(['read', 'write', 'edit', 'exec', 'process', 'tool_search', 'tool_describe', 'tool_call']));
    expect(ids).not.toContain('memory_search');
    expect(surface.tools.find((t) => t.id === 'tool_search')!.description).toContain('memory_search:');
  });

  it('finds a deferred tool, describes it and calls it through the chain', async () => {
    const { call } = await setup({ profile: 'coding', toolSearch: { mode: 'tools' } });
    const found = JSON.parse((await call('tool_search', { query: 'search my memory notes' })).text) as Array<{ id: string; input: string }>;
    expect(found[0]!.id).toBe('memory_search');
    expect(found[0]!.input).toMatch(/^\{ query: string/);
    const described = JSON.parse((await call('tool_describe', { id: 'memory_search' })).text);
    expect(described.parameters).toMatchObject({ type: 'object' });
    const { result, text } = await call('tool_call', { id: 'memory_search', args: { query: 'deploy password' } });
    expect(result.isError, text).toBeFalsy();
    expect(text).toContain('rotated weekly');
  });

  it('the chain still validates the real arguments', async () => {
    const { call } = await setup({ profile: 'coding', toolSearch: true });
    const { result, text } = await call('tool_call', { id: 'memory_search', args: { nope: 1 } });
    expect(result.isError).toBe(true);
    expect(text).toMatch(/memory_search/);
  });

  it.each<[string, Record<string, unknown>, Partial<TurnContext>, string]>([
    ['a tool the policy removed', { profile: 'coding', deny: ['memory_search'], toolSearch: true }, {}, 'memory_search'],
    ['an owner-only tool, for a non-owner', { profile: 'full', toolSearch: true }, {}, 'cron'],
  ])('cannot find or call %s', async (_name, tools, over, id) => {
    const { call, turn } = await setup(tools);
    const t = turn(over);
    const found = JSON.parse((await call('tool_search', { query: id }, t)).text) as Array<{ id: string }>;
    expect(found.map((f) => f.id)).not.toContain(id);
    const { result, text } = await call('tool_call', { id, args: {} }, t);
    expect(result.isError).toBe(true);
    expect(JSON.parse(text).error).toContain(`no tool "${id}"`);
  });

  it('off (the default): every tool is shown with its schema and no meta tools exist', async () => {
    const { executor, turn, call } = await setup({ profile: 'coding' });
    const surface = await executor.surface(turn());
    if (!surface.ok) throw new Error(surface.message);
    expect(surface.tools.map((t) => t.id)).toContain('memory_search');
    expect(surface.tools.map((t) => t.id)).not.toContain('tool_search');
    expect((await call('tool_search', { query: 'x' })).result.isError).toBe(true);
  });
});

describe('ranking', () => {
  const tools = [
    { id: 'web_search', description: 'Search the web and return titles, links and snippets.', parameters: { properties: { query: { type: 'string' } }, required: ['query'] } },
    { id: 'cron', description: 'Schedule a recurring task.', parameters: {} },
    { id: 'memory_get', description: 'Read a memory file.', parameters: {} },
  ];
  it.each([
    ['scheduling a job', 'cron'],
    ['search the web for news', 'web_search'],
    ['memory_get', 'memory_get'],
  ])('%s → %s', (query, id) => {
    expect(rankTools(query, tools, 3)[0]!.id).toBe(id);
  });
  it('a query with no usable words finds nothing', () => {
    expect(rankTools('the of a', tools, 3)).toEqual([]);
  });
  it('renders a compact input signature', () => {
    expect(signature({ properties: { path: { type: 'string' }, limit: { type: 'integer' }, mode: { enum: ['a', 'b'] } }, required: ['path'] })).toBe('{ path: string; limit?: number; mode?: "a" | "b" }');
  });
});
