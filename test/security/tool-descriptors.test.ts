// The tool surface is computed from descriptors, apart from the implementations (which load at a
// tool's first call). Attack class: what the surface gates on and shows, and what the call path
// enforces, drift apart — a descriptor says one schema while the implementation validates
// another, an owner-only tool listed as an ordinary one, a tool the surface shows that this
// process cannot run. For every core tool in the catalog (a table built from it, so a new tool
// joins it): its descriptor carries the catalog entry itself (owner-only, groups, profiles —
// one source for the surface filter and the call chain's owner check), and the loaded
// implementation validates against the very schema object the descriptor gives the model, under
// each config a schema depends on. And the surface itself loads no implementation.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentSessions } from '../../src/agent/sessions.js';
import { CORE_IMPLEMENTATIONS } from '../../src/app/core-tools.js';
import { coreToolDefinition, coreToolDescriptor, DESCRIBED_CORE_TOOLS } from '../../src/app/core-descriptors.js';
import { channelTurn } from '../../src/app/agent-testing.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { GovernedToolExecutor } from '../../src/app/tool-executor.js';
import type { ToolRuntime } from '../../src/app/tool-runtime.js';
import { ApprovalService } from '../../src/approvals/service.js';
import { parseConfig, type WardenConfig, type WardenConfigInput } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { CORE_TOOLS, coreTool, OWNER_ONLY_TOOLS } from '../../src/policy/catalog.js';
import { resolveToolSurface } from '../../src/policy/surface.js';
import { SubagentRunStore } from '../../src/agent/subagent-runs.js';
import { DbTranscriptStore } from '../../src/agent/transcript.js';
import { SessionContextStore } from '../../src/turn/session-contexts.js';
import type { Store } from '../../src/store/store.js';
import { ownerOnlyRefusal } from '../../src/tools/invoke/owner-guard.js';
import { surfaceInputs } from '../../src/app/surface-inputs.js';

/** Every config a schema depends on: the defaults, and web_fetch's bounds moved. */
const CONFIGS: Array<[label: string, raw: WardenConfigInput]> = [
  ['defaults', {}],
  ['web_fetch bounds moved', { tools: { web: { fetch: { maxChars: 3_000, maxCharsCap: 9_000 } } } }],
];
const BASE: WardenConfigInput = { models: { default: 'anthropic/test-model' }, tools: { profile: 'full' }, browser: { enabled: true } };

const dir = mkdtempSync(path.join(tmpdir(), 'warden-descriptors-'));
const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
if (!opened.ok) throw new Error(opened.error.message);
const store: Store = opened.store;
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function configOf(raw: WardenConfigInput): WardenConfig {
  const parsed = parseConfig({ ...BASE, ...raw, tools: { ...BASE.tools, ...raw.tools }, dataDir: path.join(dir, 'data') });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

/** A runtime with what a running Warden hands the tools (a real store, the agent's sessions). */
function runtimeOf(config: WardenConfig): ToolRuntime {
  const sessions = new AgentSessions({ config, transcripts: new DbTranscriptStore(store.db), runs: new SubagentRunStore(store.db), contexts: new SessionContextStore(store.db) });
  return { config, baseDir: dir, store, sessions };
}

const IDS = CORE_TOOLS.map((t) => t.id);

it('the table is the whole catalog, and every catalog tool this build implements has a descriptor (and no descriptor is for anything else)', () => {
  expect(IDS.length).toBeGreaterThanOrEqual(30);
  expect(Object.keys(CORE_IMPLEMENTATIONS).sort()).toEqual([...IDS].sort());
  expect([...DESCRIBED_CORE_TOOLS].sort()).toEqual([...IDS].sort());
});

describe.each(CONFIGS)('under %s', (_label, raw) => {
  const config = configOf(raw);
  const runtime = runtimeOf(config);

  it.each(IDS)('%s: the descriptor carries the catalog entry, and the implementation validates against its very schema', async (id) => {
    const descriptor = coreToolDescriptor(id, config)!;
    // The gate's metadata is the catalog entry itself, not a copy that could drift.
    expect(descriptor.meta).toBe(coreTool(id));
    expect(descriptor.meta.ownerOnly).toBe(OWNER_ONLY_TOOLS.includes(id));
    // The call chain's owner check refuses a non-owner exactly for the tools the descriptor marks.
    const member = channelTurn({ senderIsOwner: false });
    expect(ownerOnlyRefusal(id, member) !== undefined).toBe(descriptor.meta.ownerOnly);
    // What the model is shown is what the implementation validates: the same object.
    const impl = await CORE_IMPLEMENTATIONS[id]!.load(runtime);
    expect(impl.id).toBe(id);
    expect(impl.parameters).toBe(descriptor.parameters);
    expect(impl.parameters).toEqual(coreToolDefinition(id, config)!.parameters);
    expect(impl.description ?? descriptor.meta.description).toBe(descriptor.meta.description);
  });
});

describe('the surface the executor hands a turn (and /exec) is read from the descriptors', () => {
  const config = configOf({});
  const events = new EventBus();
  let approvals: ApprovalService;
  let executor: GovernedToolExecutor;
  beforeAll(() => {
    approvals = new ApprovalService({ store, config, events });
    executor = new GovernedToolExecutor(config, runtimeOf(config), { approvals, events });
  });
  afterAll(() => approvals.shutdown());

  it.each([
    ['an owner in a DM', channelTurn({ senderIsOwner: true, chat: 'dm', guildId: undefined })],
    ['a member in a channel', channelTurn({ senderIsOwner: false })],
  ])('%s: the policy’s tools, each as its descriptor says, owner-only ones for owners only, and nothing loaded', async (_who, turn) => {
    const surface = await executor.surface(turn, 'agent:main:test');
    if (!surface.ok) throw new Error(surface.message);
    const policy = resolveToolSurface(config, turn, surfaceInputs(config, dir)).tools;
    expect(surface.tools.map((t) => t.id)).toEqual(policy);
    for (const t of surface.tools) expect(t).toEqual(coreToolDefinition(t.id, config));
    const ownerOnlyShown = surface.tools.filter((t) => coreTool(t.id)!.ownerOnly).map((t) => t.id);
    if (turn.senderIsOwner) expect(ownerOnlyShown.sort()).toEqual([...OWNER_ONLY_TOOLS].sort());
    else expect(ownerOnlyShown).toEqual([]);
    expect(executor.loadedTools()).toEqual([]);
  });

  it('a call loads its tool then, and only it; a process that cannot build a tool leaves it off', async () => {
    const owner = channelTurn({ senderIsOwner: true, chat: 'dm', guildId: undefined });
    const surface = await executor.surface(owner, 'agent:main:test');
    if (!surface.ok) throw new Error(surface.message);
    const result = await executor.execute(
      { toolCallId: 'c1', tool: 'session_status', args: {} },
      { sessionKey: 'agent:main:test', turn: owner, signal: new AbortController().signal, surface: surface.tools.map((t) => t.id) },
    );
    expect(result.isError ?? false).toBe(false);
    expect(executor.loadedTools()).toEqual(['session_status']);
    // Without the agent's sessions the session tools cannot be built: not offered, though the policy keeps them.
    const bare = new GovernedToolExecutor(config, { config, baseDir: dir, store }, { approvals, events });
    const without = await bare.surface(owner, 'agent:main:test');
    if (!without.ok) throw new Error(without.message);
    const ids = without.tools.map((t) => t.id);
    for (const id of ['sessions_list', 'sessions_spawn', 'agents_list']) {
      expect(resolveToolSurface(config, owner, surfaceInputs(config, dir)).tools).toContain(id);
      expect(ids).not.toContain(id);
    }
    expect(ids).toContain('read');
  });
});
