// The Tool Search evaluation set: a catalog of real MCP servers' tool lists and labelled requests
// (a tuning half and a held-out half), loaded as the surface a turn would have — every catalog
// tool under its Warden id (`server__tool`) next to Warden's own deferred tools. Shared by the
// bench and the tuning script. Errors name the file, line and key, never a request's text.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApprovalService } from '../src/approvals/service.js';
import { parseConfig } from '../src/config/index.js';
import { EventBus } from '../src/events/events.js';
import { GovernedToolExecutor } from '../src/app/tool-executor.js';
import { openWardenStore } from '../src/app/migrations.js';
import { assignServerNames, toolId } from '../src/mcp/names.js';
import { buildCatalog, DEFAULT_MAX_TOOLS } from '../src/mcp/catalog.js';
import { directTools } from '../src/agent/tool-search/settings.js';
import { rankTools, type RankOptions, type Searchable } from '../src/agent/tool-search/rank.js';
import type { TurnContext } from '../src/policy/context.js';
import { CORE_TOOLS } from '../src/policy/catalog.js';

export const DATA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'data/tool-search');
export const CATALOG_FILE = path.join(DATA_DIR, 'catalog.json');
export const TUNE_FILE = path.join(DATA_DIR, 'tune.jsonl');
/** Every labelled file tuning may use, in order: a new one is one more line here. */
export const TUNE_FILES: readonly string[] = [TUNE_FILE, path.join(DATA_DIR, 'tune-2.jsonl'), path.join(DATA_DIR, 'tune-3.jsonl'), path.join(DATA_DIR, 'tune-4.jsonl'), path.join(DATA_DIR, 'tune-5.jsonl')];
export const HELDOUT_FILE = path.join(DATA_DIR, 'heldout.jsonl');
/** A third blind set, written after the ranker's last change and never used for tuning. */
export const HELDOUT3_FILE = path.join(DATA_DIR, 'heldout-3.jsonl');

export interface LabelledRequest {
  request: string;
  /** Warden ids of the tools that serve it (any one counts). */
  expected: string[];
}

interface RawTool {
  name: string;
  server?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

const fail = (where: string, why: string): never => {
  throw new Error(`${where}: ${why}`);
};

export interface Catalog {
  tools: Searchable[];
  servers: number;
  /** `server/tool` as the catalog spells it → Warden id. */
  ids: Map<string, string>;
}

/**
 * The catalog's servers and tools under the ids Warden's MCP registry would give them. The file:
 * `{ servers: [{ id, package, version, … }], tools: [{ name: "server__tool", server, description, inputSchema }] }`,
 * each server's tools as its `tools/list` answered.
 */
export function loadCatalog(file = CATALOG_FILE): Catalog {
  const where = path.basename(file);
  const raw = JSON.parse(readFileSync(file, 'utf8')) as { servers?: unknown; tools?: unknown };
  if (!Array.isArray(raw.servers)) fail(`${where} .servers`, 'expected an array');
  if (!Array.isArray(raw.tools)) fail(`${where} .tools`, 'expected an array');
  const declared = (raw.servers as Array<{ id?: unknown }>).map((s, i) => (typeof s?.id === 'string' ? s.id : fail(`${where} .servers[${i}].id`, 'expected a string')));
  const names = assignServerNames(declared);
  const listed = new Map<string, Array<Record<string, unknown>>>(declared.map((d) => [d, []]));
  (raw.tools as RawTool[]).forEach((t, j) => {
    const at = `${where} .tools[${j}]`;
    if (typeof t?.name !== 'string') fail(`${at}.name`, 'expected a string');
    const server = typeof t.server === 'string' && listed.has(t.server) ? t.server : fail(`${at}.server`, 'names no server of .servers');
    const prefix = `${server}__`;
    // The server's own name for the tool; the catalog writes it after its server's id.
    listed.get(server)!.push({ ...t, name: t.name.startsWith(prefix) ? t.name.slice(prefix.length) : t.name });
  });
  // Each server's list as Warden's MCP client keeps it (bounded descriptions, prepared schemas).
  const tools: Searchable[] = [];
  const ids = new Map<string, string>();
  const reserved = new Set<string>();
  for (const [server, rawTools] of listed) {
    const built = buildCatalog(rawTools, { server, maxTools: DEFAULT_MAX_TOOLS });
    for (const why of built.diagnostics) fail(`${where} server ${server}`, why);
    for (const t of built.tools) {
      const id = toolId(names.get(server)!, t.name, reserved);
      reserved.add(id);
      for (const key of [`${server}__${t.name}`, `${server}__${t.name}`.toLowerCase(), `${server}/${t.name}`, id]) ids.set(key, id);
      tools.push({ id, description: t.description, parameters: t.parameters as Record<string, unknown> });
    }
  }
  return { tools, servers: declared.length, ids };
}

/** Labelled requests, one JSON object a line: `{ "id": "ts-001", "request": "...", "expected": ["server__tool", …] }` (any one counts). */
export function loadRequests(file: string, catalog: Catalog): LabelledRequest[] {
  const out: LabelledRequest[] = [];
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, n) => {
    if (!line.trim()) return;
    const where = `${path.basename(file)} line ${n + 1}`;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return fail(where, 'not JSON');
    }
    const request = row.request;
    if (typeof request !== 'string' || !request.trim()) fail(`${where} .request`, 'expected a non-empty string');
    const labels = Array.isArray(row.expected) && row.expected.length > 0 ? row.expected : fail(`${where} .expected`, 'expected a non-empty array of tool names');
    const expected = (labels as unknown[]).map((l, k) => (typeof l === 'string' ? catalog.ids.get(l) : undefined) ?? fail(`${where} .expected[${k}]`, 'names no tool of the catalog'));
    out.push({ request: request as string, expected });
  });
  return out;
}

/** The tuning requests of every file in TUNE_FILES, in order (the scripts that learn and cross-validate read these). */
export const loadTuning = (catalog: Catalog): LabelledRequest[] => TUNE_FILES.flatMap((f) => loadRequests(f, catalog));

/** Warden's own tools a Tool Search turn defers (every core tool an owner may have, minus the direct ones). */
export async function coreDeferred(): Promise<Searchable[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-bench-toolsearch-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), models: { default: 'openai/gpt-5' }, tools: { profile: 'full' } });
  if (!parsed.ok) throw parsed.error;
  const { config } = parsed.value;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const events = new EventBus();
  const approvals = new ApprovalService({ store: opened.store, config, events });
  try {
    const exec = new GovernedToolExecutor(config, { config, baseDir: dir, store: opened.store }, { approvals, events });
    const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'dm', senderId: 'owner', senderIsOwner: true, spawnDepth: 0, model: 'openai/gpt-5' };
    const surface = await exec.surface(turn);
    if (!surface.ok) throw new Error(surface.message);
    const direct = directTools('tools');
    const tools: Searchable[] = surface.tools.filter((t) => !direct.has(t.id)).map((t) => ({ id: t.id, description: t.description, parameters: t.parameters as Record<string, unknown> }));
    // Tools that need a live agent runtime are left off in this process; a real turn has them.
    const have = new Set(tools.map((t) => t.id));
    for (const t of CORE_TOOLS) if (!direct.has(t.id) && !have.has(t.id)) tools.push({ id: t.id, description: t.description, parameters: { type: 'object', properties: {} } });
    return tools;
  } finally {
    approvals.shutdown();
    await opened.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Recall {
  n: number;
  top1: number;
  top3: number;
  top5: number;
  /** Indexes of the requests missed in the top 3 (for tuning on the tuning half only). */
  missed: number[];
}

export function recall(requests: readonly LabelledRequest[], surface: readonly Searchable[], options?: RankOptions): Recall {
  let top1 = 0;
  let top3 = 0;
  let top5 = 0;
  const missed: number[] = [];
  requests.forEach((r, i) => {
    const found = rankTools(r.request, surface, 5, options).map((t) => t.id);
    const rank = found.findIndex((id) => r.expected.includes(id));
    if (rank === 0) top1++;
    if (rank >= 0 && rank < 3) top3++;
    else missed.push(i);
    if (rank >= 0) top5++;
  });
  const n = Math.max(1, requests.length);
  return { n: requests.length, top1: top1 / n, top3: top3 / n, top5: top5 / n, missed };
}

export const available = (file: string) => existsSync(file);
