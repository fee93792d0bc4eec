/**
 * `memory_get`: reads a memory file (`MEMORY.md` or `memory/…md`) by path, optionally a line
 * range. Reads go through the workspace guard; a path that resolves to anything but a memory
 * file is refused, so this tool cannot be used as a general file reader.
 */
import type { ToolImplementation, ToolResult } from '../../types.js';
import { sniffFileKind } from '../fs/file-kind.js';
import { paginate, splitLines } from '../fs/read-page.js';
import { errorResult, guardResult, textResult } from '../fs/tool-result.js';
import { wrapUntrusted } from '../../untrusted.js';
import { resolveWorkspacePath } from '../fs/workspace.js';
import { readVerified } from '../fs/workspace-io.js';
import { MAX_MEMORY_FILE_BYTES } from './memory-index.js';
import { isMemoryPath } from './memory-paths.js';
import { memoryGetParameters } from './memory-schemas.js';

export interface MemoryGetArgs {
  path: string;
  from?: number;
  lines?: number;
}

/** Daily notes (`memory/2026-01-31.md`) that do not exist yet read as empty, not as an error. */
const DAILY_NOTE = /^memory\/\d{4}-\d{2}-\d{2}\.md$/;

export const memoryGetTool: ToolImplementation<MemoryGetArgs> = {
  id: 'memory_get',
  parameters: memoryGetParameters,
  async execute(args, ctx): Promise<ToolResult> {
    const resolved = await resolveWorkspacePath(ctx.workspaceDir, args.path);
    if (!resolved.ok) return guardResult(resolved, { path: args.path });
    if (!isMemoryPath(resolved.rel)) {
      return errorResult(`${args.path} is not a memory file; memory_get reads MEMORY.md and files under memory/ only.`, { path: resolved.rel, code: 'not-memory' });
    }
    if (resolved.stat === undefined && DAILY_NOTE.test(resolved.rel)) {
      return textResult(`${resolved.rel} does not exist yet (no notes for that day).`, { path: resolved.rel, missing: true });
    }
    const file = await readVerified(resolved, MAX_MEMORY_FILE_BYTES);
    if (!file.ok) return guardResult(file, { path: resolved.rel });
    if (sniffFileKind(file.data).kind !== 'text') return errorResult(`${resolved.rel} is not a text file`, { path: resolved.rel, code: 'binary' });
    const page = paginate(splitLines(file.data.toString('utf8').replace(/^\uFEFF/, '')), {
      offset: args.from,
      limit: args.lines,
      maxLines: 2000,
      maxChars: 12_000,
      maxLineChars: 2000,
      offsetParam: 'from',
    });
    const parts = page.lastLine > 0 ? [wrapUntrusted(`file:${resolved.rel}`, page.body)] : [];
    if (page.notice) parts.push(page.notice);
    return textResult(parts.join('\n'), { path: resolved.rel, from: page.firstLine, to: page.lastLine, totalLines: page.totalLines });
  },
};
