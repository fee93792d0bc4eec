// Every core tool this build implements, projected for every provider: none may be left out,
// and Gemini's copies may carry none of the keywords it rejects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentRuntime } from '../../agent/runtime.js';
import { createHarness, FunctionToolExecutor, type Harness } from '../../app/agent-testing.js';
import { CORE_IMPLEMENTATIONS } from '../../app/core-tools.js';
import type { JsonSchema } from '../../tools/types.js';
import { createScriptedProvider } from '../scripted.js';
import { GEMINI_UNSUPPORTED } from './gemini.js';
import { projectTools, type ProjectionTarget } from './index.js';
import { isSchema, mapSubschemas, type Schema } from './walk.js';

let h: Harness;
const tools: Array<{ id: string; description: string; parameters: JsonSchema }> = [];
beforeAll(async () => {
  h = await createHarness();
  const runtime = createAgentRuntime(h.deps(createScriptedProvider(), new FunctionToolExecutor({})));
  for (const [id, entry] of Object.entries(CORE_IMPLEMENTATIONS)) {
    const impl = await entry.load({ config: h.config, baseDir: process.cwd(), store: h.store, sessions: runtime.sessions });
    tools.push({ id, description: id, parameters: impl.parameters });
  }
});
afterAll(() => h.cleanup());

const targets: ProjectionTarget[] = [
  { api: 'anthropic', provider: 'anthropic', model: 'claude-sonnet-4-5' },
  { api: 'openai', provider: 'openai', model: 'gpt-5-mini' },
  { api: 'openai', provider: 'ollama', model: 'qwen3' },
  { api: 'openai', provider: 'xai', model: 'grok-4' },
  { api: 'gemini', provider: 'gemini', model: 'gemini-2.5-flash' },
];

/** Keywords present at schema positions anywhere in the tree (property names excluded). */
function keywordsIn(schema: Schema, found = new Set<string>()): Set<string> {
  for (const key of Object.keys(schema)) found.add(key);
  mapSubschemas(schema, (child) => {
    keywordsIn(child, found);
    return child;
  });
  return found;
}

describe.each(targets)('core tools for $provider/$model', (target) => {
  it('projects every implemented core tool to an object schema', () => {
    expect(tools.length).toBeGreaterThan(10);
    const result = projectTools(tools, target);
    expect(result.diagnostics.filter((d) => d.kind === 'omitted')).toEqual([]);
    for (const t of result.tools) {
      expect(t.parameters.type).toBe('object');
      expect(isSchema(t.parameters.properties)).toBe(true);
    }
    if (target.api === 'gemini') {
      for (const t of result.tools) {
        const bad = [...keywordsIn(t.parameters as Schema)].filter((k) => GEMINI_UNSUPPORTED.has(k) || k === 'const' || k === 'anyOf' || k === 'oneOf');
        expect({ tool: t.id, bad }).toEqual({ tool: t.id, bad: [] });
      }
    }
  });
});
