/**
 * `write`: creates or replaces a workspace file. Parent directories are created inside the
 * workspace; the file is replaced atomically (temp file + rename), so a reader never sees half
 * a file and a symlink in the final segment is never written through.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ToolImplementation, ToolResult } from '../../types.js';
import { withPathLocks } from './path-lock.js';
import { errorResult, guardResult, textResult } from './tool-result.js';
import { resolveWorkspacePath } from './workspace.js';
import { writeAtomic } from './workspace-io.js';
import { writeParameters } from './schemas.js';

export interface WriteArgs {
  path: string;
  content: string;
}

/** Content larger than this is refused (same ceiling as reads). */
export const MAX_WRITE_CHARS = 16 * 1024 * 1024;

export const writeTool: ToolImplementation<WriteArgs> = {
  id: 'write',
  parameters: writeParameters,
  async execute(args, ctx): Promise<ToolResult> {
    if (typeof args.content !== 'string') return errorResult('content must be a string');
    if (args.content.length > MAX_WRITE_CHARS) return errorResult(`content is ${args.content.length} characters, over the ${MAX_WRITE_CHARS}-character limit`);
    // The workspace may not exist yet on a first run; it is Warden's own directory to create.
    await mkdir(path.resolve(ctx.workspaceDir), { recursive: true });
    const resolved = await resolveWorkspacePath(ctx.workspaceDir, args.path);
    if (!resolved.ok) return guardResult(resolved, { path: args.path });
    if (resolved.rel === '.') return errorResult('path names the workspace itself; give a file name');
    return withPathLocks([resolved.abs], async () => {
      // Re-resolve under the lock: a queued write may have created the file meanwhile.
      const current = await resolveWorkspacePath(ctx.workspaceDir, args.path);
      if (!current.ok) return guardResult(current, { path: args.path });
      const written = await writeAtomic(current, args.content);
      if (!written.ok) return guardResult(written, { path: current.rel });
      ctx.log.debug({ path: current.rel, bytes: written.bytes, created: written.created }, 'write');
      return textResult(`Successfully wrote ${written.bytes} bytes to ${current.rel}`, { path: current.rel, bytes: written.bytes, created: written.created });
    });
  },
};
