// Shared by the agent's tests and the turn benchmark: a real SQLite store in a temp dir,
// a parsed config, and a small tool executor over plain functions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseConfig, type WardenConfigInput, type WardenConfig } from '../config/index.js';
import { modelSettings } from '../models/settings.js';
import type { ModelProvider } from '../models/types.js';
import type { TurnContext } from '../policy/context.js';
import { openWardenStore } from './migrations.js';
import type { Store } from '../store/index.js';
import type { JsonSchema, ToolResult } from '../tools/types.js';
import { SessionContextStore } from '../turn/session-contexts.js';
import { SubagentRunStore } from '../agent/subagent-runs.js';
import { DbTranscriptStore } from '../agent/transcript.js';
import type { AgentDeps, ToolCallRequest, ToolCallScope, ToolDefinition, ToolExecutor } from '../agent/types.js';

export interface TestTool {
  description?: string;
  parameters?: JsonSchema;
  run: (args: Record<string, unknown>, scope: ToolCallScope) => Promise<ToolResult> | ToolResult;
}

/** Runs plain functions as tools; records each call. Not the governed call path. */
export class FunctionToolExecutor implements ToolExecutor {
  readonly calls: ToolCallRequest[] = [];
  constructor(private readonly tools: Record<string, TestTool>) {}

  surface(): { ok: true; tools: ToolDefinition[] } {
    return {
      ok: true,
      tools: Object.entries(this.tools).map(([id, t]) => ({
        id,
        description: t.description ?? id,
        parameters: t.parameters ?? { type: 'object', properties: {} },
      })),
    };
  }

  async execute(call: ToolCallRequest, scope: ToolCallScope): Promise<ToolResult> {
    this.calls.push(call);
    const tool = this.tools[call.tool];
    if (!tool) return { content: [{ type: 'text', text: `no tool ${call.tool}` }], isError: true };
    return tool.run(call.args, scope);
  }
}

export const text = (t: string): ToolResult => ({ content: [{ type: 'text', text: t }] });

/** A model that answers at once with `re: <the last user message>`: turn loops with no model cost. */
export const echoModel: ModelProvider = {
  name: 'anthropic',
  api: 'anthropic',
  async complete(request) {
    const last = request.messages.at(-1);
    const said = last?.role === 'user' ? last.content.map((p) => (p.type === 'text' ? p.text : '')).join('') : '';
    return { message: { role: 'assistant', content: [{ type: 'text', text: `re: ${said}` }] }, stopReason: 'end', usage: { inputTokens: 1, outputTokens: 1 } };
  },
};

export interface Harness {
  /** The temp dir the store lives in (removed by cleanup). */
  dir: string;
  config: WardenConfig;
  store: Store;
  transcripts: DbTranscriptStore;
  subagentRuns: SubagentRunStore;
  /** The conversations sessions were created by (what the router records). */
  sessionContexts: SessionContextStore;
  deps(provider: ModelProvider, tools: ToolExecutor, extra?: Partial<AgentDeps>): AgentDeps;
  cleanup(): Promise<void>;
}

export async function createHarness(configInput: WardenConfigInput = {}): Promise<Harness> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-agent-'));
  const parsed = parseConfig({ models: { default: 'anthropic/test-model', retry: { baseDelayMs: 1, maxDelayMs: 5 } }, ...configInput });
  if (!parsed.ok) throw parsed.error;
  const opened = await openWardenStore({ dataDir: dir });
  if (!opened.ok) throw new Error(opened.error.message);
  const { config } = parsed.value;
  const transcripts = new DbTranscriptStore(opened.store.db);
  const subagentRuns = new SubagentRunStore(opened.store.db);
  const sessionContexts = new SessionContextStore(opened.store.db);
  return {
    dir,
    config,
    store: opened.store,
    transcripts,
    subagentRuns,
    sessionContexts,
    deps: (provider, tools, extra = {}) => ({
      config,
      transcripts,
      subagentRuns,
      sessionContexts,
      tools,
      models: (ref) => {
        const settings = modelSettings(config, ref);
        return settings.ok ? { ok: true, provider, settings: settings.value } : settings;
      },
      ...extra,
    }),
    cleanup: async () => {
      await opened.store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const channelTurn = (over: Partial<TurnContext> = {}): TurnContext => ({
  agentId: 'main',
  provider: 'discord',
  chat: 'channel',
  guildId: 'g1',
  channelId: 'c1',
  channelName: 'general',
  senderId: 'u1',
  senderName: 'alice',
  senderIsOwner: false,
  spawnDepth: 0,
  ...over,
});
