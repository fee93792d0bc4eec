/**
 * `memory_search`: ranked full-text search over `MEMORY.md` and `memory/*.md`. Each call
 * brings the index up to date first (only changed files are read), then returns the best
 * chunks with their line ranges, each wrapped as untrusted file content.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { WardenConfig } from '../../../config/index.js';
import { resolveDataDir } from '../../../store/data-dir.js';
import type { ToolImplementation, ToolResult } from '../../types.js';
import { errorResult, textResult } from '../fs/tool-result.js';
import { wrapUntrusted } from '../../untrusted.js';
import { MemoryIndex, toFtsQuery } from './memory-index.js';
import { memorySearchParameters, MAX_RESULTS, DEFAULT_RESULTS } from './memory-schemas.js';

export interface MemorySearchArgs {
  query: string;
  maxResults?: number;
}

export interface MemorySearchOptions {
  /**
   * The index to use. Default: one in-memory index for the process. Pass an index on a file in
   * Warden's state directory to keep it across restarts; never put it inside the workspace,
   * where the agent's own commands could replace it.
   */
  index?: MemoryIndex;
  /** Characters of each hit shown to the model. */
  snippetChars?: number;
}

export function createMemorySearchTool(options: MemorySearchOptions = {}): ToolImplementation<MemorySearchArgs> {
  let index = options.index;
  const snippetChars = options.snippetChars ?? 700;
  return {
    id: 'memory_search',
    parameters: memorySearchParameters,
    async execute(args, ctx): Promise<ToolResult> {
      if (typeof args.query !== 'string' || toFtsQuery(args.query) === undefined) {
        return errorResult('query has no words to search for; give one or more words');
      }
      index ??= new MemoryIndex(':memory:');
      const limit = Math.min(MAX_RESULTS, Math.max(1, Math.floor(args.maxResults ?? DEFAULT_RESULTS)));
      const sync = await index.sync(ctx.workspaceDir);
      const hits = await index.search(ctx.workspaceDir, args.query, limit);
      const details = { query: args.query, hits: hits.map(({ text: _t, ...h }) => h), sync };
      const notes: string[] = [];
      if (sync.skipped.length > 0) notes.push(`[Skipped ${sync.skipped.length} memory file(s): ${sync.skipped.map((s) => `${s.path} (${s.reason})`).join('; ')}]`);
      if (sync.truncated) notes.push('[Only the first 2000 memory files were searched.]');
      if (hits.length === 0) return textResult([`No memory matches for "${args.query}".`, ...notes].join('\n'), details);

      const blocks = hits.map((h, i) => {
        const snippet = h.text.length > snippetChars ? `${h.text.slice(0, snippetChars)}…` : h.text;
        const where = `${h.path} lines ${h.startLine}-${h.endLine}${h.heading ? ` (section "${h.heading}")` : ''}`;
        return `${i + 1}. ${where}\n${wrapUntrusted(`file:${h.path}`, snippet)}`;
      });
      const text = [
        `Found ${hits.length} memory match${hits.length === 1 ? '' : 'es'} for "${args.query}", best first:`,
        ...blocks,
        'Use memory_get with a path and from/lines to read more around a match.',
        ...notes,
      ].join('\n');
      return textResult(text, details);
    },
  };
}

export const memorySearchTool = createMemorySearchTool();

/** The index file inside Warden's data directory (beside the store, never in a workspace). */
export const MEMORY_INDEX_FILE = 'memory-index.sqlite';
const indexes = new Map<string, MemoryIndex>();

/** memory_search for a running Warden: one persistent index per data directory. */
export function memorySearchForRuntime(runtime: { config: WardenConfig; baseDir: string }): ToolImplementation<MemorySearchArgs> {
  const dataDir = resolveDataDir({ configDataDir: runtime.config.dataDir, env: process.env, cwd: runtime.baseDir });
  const file = path.join(dataDir, MEMORY_INDEX_FILE);
  let index = indexes.get(file);
  if (!index) {
    mkdirSync(dataDir, { recursive: true });
    index = new MemoryIndex(file);
    indexes.set(file, index);
  }
  return createMemorySearchTool({ index });
}
