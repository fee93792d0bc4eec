// Tool Search over a real MCP server listing 1,000 tools: the model sees the core tools and
// tool_search / tool_describe / tool_call instead of 1,000 schemas; tool_search finds the right
// tool for labelled requests; tool_call reaches only the turn's surface and runs the whole chain.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import { parseConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { GovernedToolExecutor } from '../../src/app/tool-executor.js';
import type { McpManager } from '../../src/mcp/manager.js';
import { reservedToolNames } from '../../src/mcp/registry.js';
import { startMcp } from '../../src/mcp/start.js';
import type { TurnContext } from '../../src/policy/context.js';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/index.js';
import { schemaTokens } from '../../src/agent/tool-search/settings.js';
import { LABELLED_QUERIES, thousandTools } from '../fixtures/mcp/catalog.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/mcp/server.mjs');
const dir = mkdtempSync(path.join(tmpdir(), 'warden-mcp-search-'));
const log = path.join(dir, 'mcp.log');
const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function executorFor(tools: Record<string, unknown>, servers: Record<string, unknown>): Promise<{ executor: GovernedToolExecutor; manager: McpManager }> {
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), models: { default: 'openai/gpt-5' }, tools, mcp: { servers } });
  if (!parsed.ok) throw parsed.error;
  const { config } = parsed.value;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const store: Store = opened.store;
  const events = new EventBus();
  const approvals = new ApprovalService({ store, config, events });
  const manager = startMcp(config, dir, { reserved: reservedToolNames(() => []) })!;
  cleanups.push(() => store.close(), () => approvals.shutdown(), () => manager.stop());
  return { executor: new GovernedToolExecutor(config, { config, baseDir: dir, store }, { approvals, events }), manager };
}

const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'dm', senderId: 'u', senderIsOwner: false, spawnDepth: 0, model: 'openai/gpt-5' };
const hub = (catalog: string, extra: Record<string, unknown> = {}) => ({ command: process.execPath, args: [FIXTURE], env: { MCP_FIXTURE_CATALOG: catalog, MCP_FIXTURE_LOG: log }, maxTools: 2000, ...extra });

let big: { executor: GovernedToolExecutor; manager: McpManager };
let small: { executor: GovernedToolExecutor; manager: McpManager };

beforeAll(async () => {
  mkdirSync(path.join(dir, 'workspace'), { recursive: true });
  const thousand = path.join(dir, 'thousand.json');
  writeFileSync(thousand, JSON.stringify(thousandTools()));
  const none = path.join(dir, 'none.json');
  writeFileSync(none, '[]');
  big = await executorFor({ profile: 'coding', toolSearch: { mode: 'tools', threshold: 50 }, deny: ['hub__stripe_*'] }, { hub: hub(thousand) });
  small = await executorFor({ profile: 'coding', toolSearch: { mode: 'tools', threshold: 50 } }, { few: hub(none) });
  await Promise.all([big.manager.ready(20_000), small.manager.ready(20_000)]);
}, 30_000);

async function call(executor: GovernedToolExecutor, tool: string, args: Record<string, unknown>) {
  const surface = await executor.surface(turn);
  if (!surface.ok) throw new Error(surface.message);
  const result = await executor.execute({ toolCallId: 'c', tool, args }, { sessionKey: 'agent:main:web:direct:u', turn, signal: new AbortController().signal, surface: surface.tools.map((d) => d.id) });
  return { result, text: result.content.map((c) => (c.type === 'text' ? c.text : '')).join('') };
}

describe('Tool Search over 1,000 MCP tools', () => {
  it('the model sees the core tools it uses constantly and the three meta tools, no MCP schema; the block is ≤ 5 % of the full one', async () => {
    expect(big.manager.tools().length).toBe(1008);
    const surface = await big.executor.surface(turn);
    if (!surface.ok) throw new Error(surface.message);
    const ids = surface.tools.map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining(['read', 'write', 'edit', 'exec', 'tool_search', 'tool_describe', 'tool_call']));
    expect(ids.some((id) => id.startsWith('hub__'))).toBe(false);
    const report = big.executor.report(turn);
    const full = await Promise.all(report.tools.map(async (id) => ({ ...(await big.executor.resolveTool(id, turn))!, id })));
    const ratio = schemaTokens(surface.tools) / schemaTokens(full.map((t) => ({ id: t.id, description: t.description ?? '', parameters: t.parameters })));
    expect(ratio).toBeLessThanOrEqual(0.05);
  });

  it('below its threshold Tool Search stays out: every tool is shown, no meta tool', async () => {
    const surface = await small.executor.surface(turn);
    if (!surface.ok) throw new Error(surface.message);
    const ids = surface.tools.map((t) => t.id);
    expect(ids).toContain('few__echo');
    expect(ids).not.toContain('tool_search');
    // A meta tool the turn does not have is an unknown tool.
    expect((await call(small.executor, 'tool_search', { query: 'echo' })).text).toContain('Unknown tool \\"tool_search\\"');
  });

  it(`tool_search puts the labelled tool in its top 3 for at least 90 % of ${LABELLED_QUERIES.length} requests`, async () => {
    let hits = 0;
    const misses: string[] = [];
    for (const [query, tool] of LABELLED_QUERIES) {
      const { text } = await call(big.executor, 'tool_search', { query, limit: 3 });
      const found = (JSON.parse(text) as Array<{ id: string }>).map((h) => h.id);
      // Stripe's tools are denied: a request for one finds nothing of Stripe's.
      if (tool.startsWith('stripe_')) {
        expect(found.some((id) => id.startsWith('hub__stripe_'))).toBe(false);
        continue;
      }
      if (found.includes(`hub__${tool}`)) hits++;
      else misses.push(`${query} → ${found.join(', ')}`);
    }
    const asked = LABELLED_QUERIES.filter(([, t]) => !t.startsWith('stripe_')).length;
    expect(hits / asked, misses.join('\n')).toBeGreaterThanOrEqual(0.9);
  }, 60_000);

  it('tool_describe gives the full schema; tool_call runs the tool through the chain on the server', async () => {
    const described = JSON.parse((await call(big.executor, 'tool_describe', { id: 'hub__github_list_issues' })).text) as { parameters: { properties: Record<string, unknown> } };
    expect(Object.keys(described.parameters.properties)).toEqual(['query', 'limit']);
    const { result, text } = await call(big.executor, 'tool_call', { id: 'hub__github_list_issues', args: { query: 'login' } });
    expect(result.isError).toBeFalsy();
    expect(text).toContain('github_list_issues ran with {"query":"login"}');
    expect(readFileSync(log, 'utf8')).toContain('call github_list_issues {"query":"login"}');
  });

  it('tool_call checks the arguments against the server\'s schema before anything reaches it', async () => {
    const { result, text } = await call(big.executor, 'tool_call', { id: 'hub__github_get_issue', args: { number: 7 } });
    expect(result.isError).toBe(true);
    expect(text).toContain('Invalid arguments for hub__github_get_issue');
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '').not.toContain('github_get_issue');
  });

  it.each([
    ['a tool the policy denies', 'hub__stripe_create_refund'],
    ['a tool no server has', 'hub__github_launch_rocket'],
    ['a meta tool', 'tool_call'],
  ])('tool_call refuses %s: nothing outside the surface is reachable', async (_what, id) => {
    const { result, text } = await call(big.executor, 'tool_call', { id, args: {} });
    expect(result.isError).toBe(true);
    expect(text).toContain('among the tools you can find this turn');
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '').not.toContain(id.replace('hub__', 'call '));
  });
});
