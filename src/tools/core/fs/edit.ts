/**
 * `edit`: replaces exact text in a workspace file (reference C6 parameters: `edits` list, with
 * the legacy top-level `oldText`/`newText` folded in). The matching rules live in
 * `edit-apply.ts`; this shell reads and writes through the workspace guard under the path lock.
 */
import type { ToolImplementation, ToolResult } from '../../types.js';
import { applyEdits, type EditSpec } from './edit-apply.js';
import { sniffFileKind } from './file-kind.js';
import { withPathLocks } from './path-lock.js';
import { errorResult, guardResult, textResult } from './tool-result.js';
import { resolveWorkspacePath } from './workspace.js';
import { readVerified, writeAtomic } from './workspace-io.js';
import { editParameters } from './schemas.js';

export interface EditArgs {
  path: string;
  edits?: EditSpec[] | string;
  oldText?: string;
  newText?: string;
  replaceAll?: boolean;
}

/** Folds the argument spellings the reference accepts into one list, or says what is wrong. */
export function collectEdits(args: EditArgs): EditSpec[] | string {
  let edits: unknown = args.edits ?? [];
  if (typeof edits === 'string') {
    try {
      edits = JSON.parse(edits);
    } catch {
      return 'edits must be an array of {oldText, newText}';
    }
  }
  if (!Array.isArray(edits)) return 'edits must be an array of {oldText, newText}';
  const list = [...(edits as EditSpec[])];
  if (args.oldText !== undefined || args.newText !== undefined) {
    if (args.oldText === undefined || args.newText === undefined) return 'oldText and newText must be given together';
    list.push({ oldText: args.oldText, newText: args.newText, replaceAll: args.replaceAll });
  }
  if (list.length === 0) return 'nothing to do: give edits: [{oldText, newText}]';
  return list;
}

export const editTool: ToolImplementation<EditArgs> = {
  id: 'edit',
  parameters: editParameters,
  async execute(args, ctx): Promise<ToolResult> {
    const edits = collectEdits(args);
    if (typeof edits === 'string') return errorResult(edits);
    const resolved = await resolveWorkspacePath(ctx.workspaceDir, args.path);
    if (!resolved.ok) return guardResult(resolved, { path: args.path });
    return withPathLocks([resolved.abs], async () => {
      const current = await resolveWorkspacePath(ctx.workspaceDir, args.path);
      if (!current.ok) return guardResult(current, { path: args.path });
      const file = await readVerified(current);
      if (!file.ok) return guardResult(file, { path: current.rel });
      if (sniffFileKind(file.data).kind !== 'text') return errorResult(`${current.rel} is not a text file; edit only changes text files.`, { path: current.rel, code: 'binary' });
      const outcome = applyEdits(file.data.toString('utf8'), edits, current.rel);
      if (!outcome.ok) return errorResult(outcome.message, { path: current.rel });
      const written = await writeAtomic(current, outcome.content);
      if (!written.ok) return guardResult(written, { path: current.rel });
      return textResult(
        `Successfully replaced ${outcome.replacements} occurrence${outcome.replacements === 1 ? '' : 's'} in ${current.rel} (first change at line ${outcome.firstChangedLine}).`,
        { path: current.rel, replacements: outcome.replacements, firstChangedLine: outcome.firstChangedLine },
      );
    });
  },
};
