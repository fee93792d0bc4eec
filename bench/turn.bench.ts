// Model-independent overhead of one turn: surface, projection, system prompt, transcript,
// context budget and the loop itself, with a model that answers instantly. Measured for a
// session with 200 transcript entries against the same turn on an empty transcript.
import { createAgentRuntime } from '../src/agent/runtime.js';
import { buildSystemPrompt } from '../src/agent/system-prompt.js';
import { channelTurn, createHarness } from '../src/app/agent-testing.js';
import type { ToolDefinition, ToolExecutor, TranscriptAppend, TranscriptEntry, TranscriptStore } from '../src/agent/types.js';
import { projectSchema, projectTools } from '../src/models/projection/index.js';
import { createScriptedProvider } from '../src/models/scripted.js';
import type { Message } from '../src/models/types.js';
import { resolveToolSurface } from '../src/policy/surface.js';
import { CORE_IMPLEMENTATIONS } from '../src/app/core-tools.js';
import { fmtMs, fmtRatio, measure, type Bench } from './harness.js';

const ENTRIES = 200;

/** 200 entries shaped like a working session: questions, answers, tool calls and their results. */
function sessionEntries(count: number): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  for (let i = 0; out.length < count; i++) {
    const msgs: Message[] = [
      { role: 'user', content: [{ type: 'text', text: `alice: question ${i} about the deploy ${'context '.repeat(20)}` }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' }, { type: 'toolCall', id: `c${i}`, name: 'read', args: { path: `notes/${i}.md` } }] },
      { role: 'toolResult', toolCallId: `c${i}`, toolName: 'read', content: [{ type: 'text', text: `<untrusted source="file:notes/${i}.md">\n${'line of notes\n'.repeat(60)}</untrusted>` }], isError: false },
      { role: 'assistant', content: [{ type: 'text', text: `Answer ${i}: ${'details '.repeat(25)}` }] },
    ];
    for (const message of msgs) out.push({ seq: out.length + 1, message, kind: 'message', createdAt: 0 });
  }
  return out.slice(0, count);
}

/** A fixed transcript: loads the same entries every turn and drops appends, so every iteration measures the same turn. */
class FixedTranscript implements TranscriptStore {
  constructor(private readonly entries: TranscriptEntry[]) {}
  async load() {
    return [...this.entries];
  }
  async append(_key: string, entries: TranscriptAppend[]) {
    return entries.map((e, i) => ({ ...e, seq: 1_000_000 + i, createdAt: 0 }));
  }
  async history() {
    return this.entries;
  }
  async sessions() {
    return [];
  }
}

const bench: Bench = async (report) => {
  const h = await createHarness({ models: { default: 'anthropic/bench-model', contextWindow: 200_000 }, tools: { profile: 'coding' } });
  const { config } = h;
  // The real parameter schemas of every core tool that loads here (session tools need a runtime: a plain object schema stands in).
  const parameters = new Map<string, ToolDefinition['parameters']>();
  for (const [id, entry] of Object.entries(CORE_IMPLEMENTATIONS)) {
    try {
      parameters.set(id, (await entry.load({ config, baseDir: process.cwd(), store: h.store })).parameters);
    } catch {
      parameters.set(id, { type: 'object', properties: {} });
    }
  }
  const implemented = (id: string) => (parameters.has(id) ? { ok: true as const } : undefined);
  const definitions = new Map<string, ToolDefinition>();
  const executor: ToolExecutor = {
    surface(turn) {
      const s = resolveToolSurface(config, turn, { implemented });
      return {
        ok: true,
        tools: s.tools.map((id) => {
          let d = definitions.get(id);
          if (!d) definitions.set(id, (d = { id, description: `The ${id} tool.`, parameters: parameters.get(id)! }));
          return d;
        }),
      };
    },
    execute: async () => ({ content: [{ type: 'text', text: 'unused' }] }),
  };
  const model = createScriptedProvider([], { fallback: () => ({ text: 'Done.' }) });
  const turn = channelTurn();
  const run = (transcripts: TranscriptStore) => {
    const runtime = createAgentRuntime({ ...h.deps(model, executor), transcripts });
    return () => runtime.runTurn({ sessionKey: 'agent:main:discord:channel:c1', turn, input: { text: 'what changed?' }, signal: new AbortController().signal });
  };

  const entries = sessionEntries(ENTRIES);
  const empty = await measure(run(new FixedTranscript([])), { iterations: 2000 });
  const full = await measure(run(new FixedTranscript(entries)), { iterations: 2000 });
  report({ name: 'turn overhead, empty transcript (baseline), median', value: fmtMs(empty.median), note: `p99 ${fmtMs(empty.p99)}` });
  report({ name: `turn overhead, ${ENTRIES} transcript entries, median`, value: fmtMs(full.median), note: `p99 ${fmtMs(full.p99)}, ${fmtRatio(full.median / empty.median)} baseline` });

  // The parts, for when the total moves.
  const surfaceTools = (executor.surface(turn, 's') as { ok: true; tools: ToolDefinition[] }).tools;
  const target = { api: 'anthropic' as const, provider: 'anthropic', model: 'bench-model' };
  const surface = await measure(() => resolveToolSurface(config, turn, { implemented }), { iterations: 5000 });
  report({ name: `resolveToolSurface (${surfaceTools.length} tools)`, value: fmtMs(surface.median) });
  const projected = await measure(() => projectTools(surfaceTools, target), { iterations: 5000 });
  report({ name: 'projectTools, memoised (every turn after the first)', value: fmtMs(projected.median) });
  const cold = await measure(() => surfaceTools.forEach((t) => projectSchema(t.parameters, { ...target, api: 'gemini', provider: 'gemini' })), { iterations: 500 });
  report({ name: 'projectSchema, uncached, all tools for Gemini', value: fmtMs(cold.median) });
  const names = surfaceTools.map((t) => t.id);
  const prompt = await measure(() => buildSystemPrompt({ config, turn, skillsCatalog: '', toolNames: names }), { iterations: 5000 });
  report({ name: 'buildSystemPrompt', value: fmtMs(prompt.median) });

  const key = 'agent:main:discord:channel:bench';
  await h.transcripts.append(key, entries.map((e) => ({ kind: 'message', message: e.message })));
  const load = await measure(() => h.transcripts.load(key), { iterations: 1000 });
  report({ name: `DbTranscriptStore.load (${ENTRIES} entries)`, value: fmtMs(load.median) });
  await h.cleanup();
};

export default bench;
