// MCP and Tool Search: (1) the prompt's tool block with 1,000 MCP tools, every schema vs Tool
// Search (target ≤ 5 %); (2) tool_search's top-3 recall on the generated fixture's own requests
// through the whole chain (a regression figure: the recall target is measured on real servers'
// tools and blind requests in tool-search.bench.ts);
// (3) what Warden adds to one MCP call over the SDK client calling the same loopback HTTP
// server directly (target ≤ 1 ms p50), at the manager and through the whole call chain.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fetch as undiciFetch } from 'undici';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ApprovalService } from '../src/approvals/service.js';
import { parseConfig } from '../src/config/index.js';
import { EventBus } from '../src/events/events.js';
import { GovernedToolExecutor } from '../src/app/tool-executor.js';
import { reservedToolNames } from '../src/mcp/registry.js';
import { startMcp } from '../src/mcp/start.js';
import type { TurnContext } from '../src/policy/context.js';
import { openWardenStore } from '../src/app/migrations.js';
import { schemaTokens } from '../src/agent/tool-search/settings.js';
import type { ToolCallContext } from '../src/tools/types.js';
import { LABELLED_QUERIES, thousandTools } from '../test/fixtures/mcp/catalog.js';
// @ts-expect-error the fixture is plain JavaScript
import { serveHttp } from '../test/fixtures/mcp/server.mjs';
import { fmtMs, summarize, type Bench } from './harness.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test/fixtures/mcp/server.mjs');
const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'dm', senderId: 'u', senderIsOwner: false, spawnDepth: 0, model: 'openai/gpt-5' };
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

async function executor(dir: string, tools: Record<string, unknown>, servers: Record<string, unknown>) {
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), models: { default: 'openai/gpt-5' }, tools, mcp: { servers } });
  if (!parsed.ok) throw parsed.error;
  const { config } = parsed.value;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const events = new EventBus();
  const approvals = new ApprovalService({ store: opened.store, config, events });
  const manager = startMcp(config, dir, { reserved: reservedToolNames(() => []) })!;
  const exec = new GovernedToolExecutor(config, { config, baseDir: dir, store: opened.store }, { approvals, events });
  return { exec, manager, close: async () => {
      await manager.stop();
      approvals.shutdown();
      await opened.store.close();
    },
  };
}

async function callOn(exec: GovernedToolExecutor, tool: string, args: Record<string, unknown>, surface: string[]) {
  return exec.execute({ toolCallId: 'c', tool, args }, { sessionKey: 'agent:main:web:direct:u', turn, signal: new AbortController().signal, surface });
}

const bench: Bench = async (report) => {
  // The SDK's own transport (the direct baseline) leaves a listener per request on its session's signal until GC.
  process.removeAllListeners('warning');
  process.on('warning', (w) => w.name !== 'MaxListenersExceededWarning' && process.stderr.write(`${w.stack ?? w.message}\n`));
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-bench-mcp-'));
  mkdirSync(path.join(dir, 'workspace'));
  const catalog = path.join(dir, 'thousand.json');
  writeFileSync(catalog, JSON.stringify(thousandTools()));
  const hub = { command: process.execPath, args: [FIXTURE], env: { MCP_FIXTURE_CATALOG: catalog }, maxTools: 2000 };
  const searched = await executor(path.join(dir, 'a'), { profile: 'coding', toolSearch: { mode: 'tools', threshold: 50 } }, { hub });
  const full = await executor(path.join(dir, 'b'), { profile: 'coding' }, { hub });
  let http: { url: string; close: () => Promise<void> } | undefined;
  try {
    await Promise.all([searched.manager.ready(30_000), full.manager.ready(30_000)]);

    // (1) The tool block.
    const all = await full.exec.surface(turn);
    const small = await searched.exec.surface(turn);
    if (!all.ok || !small.ok) throw new Error('surface');
    const fullTokens = schemaTokens(all.tools);
    const searchTokens = schemaTokens(small.tools);
    report({ name: `tool block, ${all.tools.length} tools with full schemas`, value: `${fullTokens} tok`, note: `${JSON.stringify(all.tools).length} bytes` });
    report({ name: `tool block, Tool Search (${small.tools.length} tools: core + 3 meta)`, value: `${searchTokens} tok`, note: `${JSON.stringify(small.tools).length} bytes` });
    report({ name: 'Tool Search block / full block (target ≤ 5 %)', value: pct(searchTokens / fullTokens) });

    // (2) Recall.
    const surface = small.tools.map((t) => t.id);
    let hits = 0;
    const started = performance.now();
    for (const [query, tool] of LABELLED_QUERIES) {
      const r = await callOn(searched.exec, 'tool_search', { query, limit: 3 }, surface);
      const found = JSON.parse(r.content[0]!.type === 'text' ? r.content[0]!.text : '[]') as Array<{ id: string }>;
      if (found.some((h) => h.id === `hub__${tool}`)) hits++;
    }
    const perSearch = (performance.now() - started) / LABELLED_QUERIES.length;
    report({ name: `tool_search top-3, ${LABELLED_QUERIES.length} fixture requests (regression)`, value: pct(hits / LABELLED_QUERIES.length), note: `${hits}/${LABELLED_QUERIES.length}; the target is in tool-search` });
    report({ name: 'tool_search over 1,008 tools, one search through the chain', value: fmtMs(perSearch) });

    // (3) Call overhead on loopback HTTP.
    http = await serveHttp({ catalogFile: path.join(dir, 'none.json') }).catch(async () => {
      writeFileSync(path.join(dir, 'none.json'), '[]');
      return serveHttp({ catalogFile: path.join(dir, 'none.json') });
    });
    const direct = new Client({ name: 'bench', version: '1' });
    await direct.connect(new StreamableHTTPClientTransport(new URL(http!.url)));
    // The same client on the undici package's fetch, which Warden's guarded fetch uses: the fair baseline.
    const plain = new Client({ name: 'bench', version: '1' });
    await plain.connect(new StreamableHTTPClientTransport(new URL(http!.url), { fetch: undiciFetch as unknown as typeof fetch }));
    const viaWarden = await executor(path.join(dir, 'c'), { profile: 'coding' }, { loop: { url: http!.url } });
    await viaWarden.manager.ready(10_000);
    const impl = viaWarden.manager.implementation('loop__echo')!;
    const ctx = { signal: new AbortController().signal } as unknown as ToolCallContext;
    const chainSurface = viaWarden.exec.report(turn).tools;
    const args = { text: 'hello' };
    const iterations = 1500;
    // One call of each in turn, every iteration: drift in the machine's load hits all three alike.
    const direct1 = () => direct.callTool({ name: 'echo', arguments: args });
    const plain1 = () => plain.callTool({ name: 'echo', arguments: args });
    const manager1 = () => impl.execute(args, ctx);
    const chain1 = () => callOn(viaWarden.exec, 'loop__echo', args, chainSurface);
    for (let i = 0; i < 200; i++) for (const fn of [direct1, plain1, manager1, chain1]) await fn();
    const samples = { global: [] as number[], base: [] as number[], manager: [] as number[], chain: [] as number[] };
    for (let i = 0; i < iterations; i++) {
      for (const [key, fn] of [['global', direct1], ['base', plain1], ['manager', manager1], ['chain', chain1]] as const) {
        const t = performance.now();
        await fn();
        samples[key].push(performance.now() - t);
      }
    }
    const med = (xs: number[]) => summarize(xs).p50;
    const base = med(samples.base);
    report({ name: 'MCP call, SDK client direct, global fetch (loopback HTTP) p50', value: fmtMs(med(samples.global)) });
    report({ name: 'MCP call, SDK client direct, undici fetch (baseline) p50', value: fmtMs(base) });
    report({ name: 'MCP call, Warden manager (queue, timeout, result mapping) p50', value: fmtMs(med(samples.manager)), note: `overhead ${fmtMs(med(samples.manager) - base)}` });
    report({ name: 'MCP call, whole call chain (surface, schema, policy) p50', value: fmtMs(med(samples.chain)), note: `overhead ${fmtMs(med(samples.chain) - base)} (target ≤ 1 ms)` });
    await direct.close();
    await plain.close();
    await viaWarden.close();
  } finally {
    await searched.close();
    await full.close();
    await http?.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
export default bench;
