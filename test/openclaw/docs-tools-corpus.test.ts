import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import JSON5 from 'json5';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';

/**
 * Every JSON5 example of OpenClaw's documentation that carries a tools section (extracted by
 * scripts/extract-openclaw-corpus.mjs), loaded as Warden config. A section either loads, or
 * each of its problems is a refusal that names the OpenClaw key, says Warden does not support
 * it and points at the compatibility table in docs/openclaw-compatibility.md.
 */
const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/openclaw/docs-tools');
const index: Array<{ file: string; doc: string; line: number; sections: string[] }> = JSON.parse(readFileSync(path.join(dir, 'index.json'), 'utf8'));
const REFUSAL = /^OpenClaw's `[^`]+` is not supported by Warden: .+ \(see docs\/openclaw-compatibility\.md\)$/s;
const work = mkdtempSync(path.join(tmpdir(), 'warden-openclaw-corpus-'));

/** The block's tools sections as a config: the global one, and each agent's under its id. */
function toolsSectionsOf(block: Record<string, any>): Record<string, unknown> {
  const config: Record<string, any> = {};
  if (block.tools !== undefined) config.tools = block.tools;
  const entries = Object.entries(block.agents?.entries ?? {}).filter(([, a]: [string, any]) => a?.tools !== undefined);
  // Docs use placeholders such as "<agent-id>"; the id is not part of the section under test.
  if (entries.length > 0) config.agents = { entries: Object.fromEntries(entries.map(([id, a]: [string, any], i) => [/^[a-z0-9][\w-]*$/i.test(id) ? id : `agent${i}`, { tools: a.tools }])) };
  return config;
}

function load(name: string) {
  const block = JSON5.parse(readFileSync(path.join(dir, name), 'utf8'));
  const text = JSON.stringify(toolsSectionsOf(block));
  const file = path.join(work, name.replace(/\.json5$/, '.json'));
  writeFileSync(file, text);
  // A deployment sets the variables its config references.
  const env = Object.fromEntries([...text.matchAll(/\$\{([A-Za-z_]\w*)/g)].map((m) => [m[1]!, 'set']));
  return loadConfig({ file, cwd: work, env });
}

const results = index.map((entry) => ({ entry, result: load(entry.file) }));

describe("OpenClaw's documented tools sections", () => {
  it('load in Warden at least 85% of the time', () => {
    const loaded = results.filter((r) => r.result.ok).length;
    const ratio = loaded / results.length;
    const refused = results.filter((r) => !r.result.ok).map((r) => `${r.entry.doc}:${r.entry.line}`);
    console.info(`OpenClaw docs tools sections: ${loaded}/${results.length} load (${(ratio * 100).toFixed(1)}%); refused: ${refused.join(', ')}`);
    expect(ratio).toBeGreaterThanOrEqual(0.85);
  });

  it.each(results.filter((r) => !r.result.ok).map((r) => [`${r.entry.doc}:${r.entry.line}`, r.result] as const))('%s is refused only for OpenClaw features Warden lacks', (_where, result) => {
    if (result.ok) return;
    for (const problem of result.error.problems) expect(problem.message, problem.path).toMatch(REFUSAL);
  });
});
