/**
 * `apply_patch`: applies a `*** Begin Patch` envelope (reference C7) inside the workspace,
 * all or nothing. Every path (Move targets included) passes the workspace guard, every
 * update is computed in memory, and only when the whole patch validates is anything written.
 * Writes come first, deletions last; if the disk fails half-way, files already changed are
 * put back from the copies held in memory.
 */
import { readlink, symlink } from 'node:fs/promises';
import { sep } from 'node:path';
import type { ToolImplementation, ToolResult } from '../../types.js';
import { parsePatch, type PatchHunk } from './apply-patch-parse.js';
import { applyUpdateChunks } from './apply-patch-update.js';
import { sniffFileKind } from './file-kind.js';
import { withPathLocks } from './path-lock.js';
import { errorResult, textResult } from './tool-result.js';
import { checkRegularFile, resolveWorkspacePath, type ResolvedPath } from './workspace.js';
import { readVerified, unlinkInWorkspace, writeAtomic } from './workspace-io.js';
import { applyPatchParameters } from './schemas.js';

export interface ApplyPatchArgs {
  input: string;
}

/** One validated operation, ready to be written. */
type Planned =
  | { kind: 'write'; target: ResolvedPath; content: string; letter: 'A' | 'M'; original: Buffer | undefined }
  | { kind: 'delete'; target: ResolvedPath; original: Buffer | undefined; linkTarget?: string; moveSource: boolean };

type PlanOutcome = { ok: true; ops: Planned[] } | { ok: false; errors: string[] };

async function resolveOrError(workspaceDir: string, input: string, errors: string[], keepFinalLink = false): Promise<ResolvedPath | undefined> {
  const r = await resolveWorkspacePath(workspaceDir, input, { keepFinalLink });
  if (r.ok) return r;
  errors.push(`${input}: ${r.message}`);
  return undefined;
}

/** Reads the current text of an update's file, or records why it cannot be patched. */
async function readText(target: ResolvedPath, errors: string[]): Promise<{ text: string; data: Buffer } | undefined> {
  const file = await readVerified(target);
  if (!file.ok) {
    errors.push(`${target.rel}: ${file.message}`);
    return undefined;
  }
  if (sniffFileKind(file.data).kind !== 'text') {
    errors.push(`${target.rel}: not a text file; apply_patch only changes text files`);
    return undefined;
  }
  return { text: file.data.toString('utf8'), data: file.data };
}

/** An existing write target must be a plain file we could also read; its bytes are kept for rollback. */
async function existingOriginal(target: ResolvedPath, errors: string[]): Promise<Buffer | undefined> {
  if (target.stat === undefined) return undefined;
  const refused = checkRegularFile(target.stat, target.rel);
  if (refused) {
    errors.push(`${target.rel}: ${refused.message}`);
    return undefined;
  }
  const file = await readVerified(target);
  if (!file.ok) {
    errors.push(`${target.rel}: ${file.message}`);
    return undefined;
  }
  return file.data;
}

/** What is needed to undo a deletion: the bytes of a plain file, or where a symlink pointed. */
async function deletedCopy(target: ResolvedPath): Promise<{ original: Buffer | undefined; linkTarget?: string }> {
  if (target.stat?.isSymbolicLink()) return { original: undefined, linkTarget: await readlink(target.abs) };
  const file = target.stat?.isFile() && target.stat.nlink === 1 ? await readVerified(target) : undefined;
  return { original: file?.ok ? file.data : undefined };
}

async function plan(workspaceDir: string, hunks: PatchHunk[]): Promise<PlanOutcome> {
  const errors: string[] = [];
  const ops: Planned[] = [];
  for (const hunk of hunks) {
    if (hunk.type === 'add') {
      const target = await resolveOrError(workspaceDir, hunk.path, errors);
      if (!target) continue;
      const original = await existingOriginal(target, errors);
      ops.push({ kind: 'write', target, content: hunk.contents, letter: 'A', original });
    } else if (hunk.type === 'delete') {
      const target = await resolveOrError(workspaceDir, hunk.path, errors, true);
      if (!target) continue;
      if (target.stat === undefined) errors.push(`${target.rel}: file to delete does not exist`);
      else if (target.stat.isDirectory()) errors.push(`${target.rel}: is a directory; only files can be deleted`);
      else ops.push({ kind: 'delete', target, moveSource: false, ...(await deletedCopy(target)) });
    } else {
      const source = await resolveOrError(workspaceDir, hunk.path, errors);
      const dest = hunk.moveTo !== undefined ? await resolveOrError(workspaceDir, hunk.moveTo, errors) : source;
      if (!source || !dest) continue;
      const current = await readText(source, errors);
      if (!current) continue;
      const updated = applyUpdateChunks(current.text, hunk.chunks, source.rel);
      if (!updated.ok) {
        errors.push(updated.message);
        continue;
      }
      if (dest === source) {
        ops.push({ kind: 'write', target: source, content: updated.content, letter: 'M', original: current.data });
      } else {
        const destOriginal = await existingOriginal(dest, errors);
        ops.push({ kind: 'write', target: dest, content: updated.content, letter: 'M', original: destOriginal });
        ops.push({ kind: 'delete', target: source, original: current.data, moveSource: true });
      }
    }
  }
  const seen = new Set<string>();
  for (const op of ops) {
    if (seen.has(op.target.abs)) errors.push(`${op.target.rel}: changed by more than one section of the patch; combine them into one`);
    seen.add(op.target.abs);
  }
  for (const op of ops) {
    const parent = ops.find((other) => op.target.abs.startsWith(`${other.target.abs}${sep}`));
    if (parent) errors.push(`${op.target.rel}: lies inside ${parent.target.rel}, which the same patch writes or deletes as a file`);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, ops };
}

/** Puts back what `done` changed, newest first. Best effort: the disk already failed once. */
async function rollback(done: Planned[], workspaceDir: string): Promise<string[]> {
  const problems: string[] = [];
  for (const op of [...done].reverse()) {
    const again = await resolveWorkspacePath(workspaceDir, op.target.rel, { keepFinalLink: true });
    if (!again.ok) {
      problems.push(`${op.target.rel}: ${again.message}`);
      continue;
    }
    if (op.kind === 'delete' && op.linkTarget !== undefined) {
      await symlink(op.linkTarget, again.abs).catch((err: Error) => problems.push(`${op.target.rel}: ${err.message}`));
      continue;
    }
    if (op.kind === 'delete' && op.original === undefined) {
      problems.push(`${op.target.rel}: a hard-linked file cannot be restored`);
      continue;
    }
    const restored = op.original !== undefined ? await writeAtomic(again, op.original) : await unlinkInWorkspace(again);
    if (!restored.ok) problems.push(`${op.target.rel}: ${restored.message}`);
  }
  return problems;
}

export interface ApplyPatchOptions {
  /** The file writer; tests pass one that fails on a chosen path to exercise the rollback. */
  write?: typeof writeAtomic;
}

export function createApplyPatchTool(options: ApplyPatchOptions = {}): ToolImplementation<ApplyPatchArgs> {
  const write = options.write ?? writeAtomic;
  return {
    id: 'apply_patch',
    parameters: applyPatchParameters,
    async execute(args, ctx): Promise<ToolResult> {
      const parsed = parsePatch(args.input);
      if (!parsed.ok) return errorResult(`${parsed.message}\nNo files were modified.`, { code: 'parse' });
      if (parsed.hunks.length === 0) return errorResult('The patch contains no file sections. No files were modified.', { code: 'empty' });

      // Lock every path the patch names (canonical where resolvable) before validating.
      const keys: string[] = [];
      for (const hunk of parsed.hunks) {
        for (const p of [hunk.path, hunk.type === 'update' ? hunk.moveTo : undefined]) {
          if (p === undefined) continue;
          const r = await resolveWorkspacePath(ctx.workspaceDir, p, { keepFinalLink: hunk.type === 'delete' });
          if (r.ok) keys.push(r.abs);
        }
      }
      return withPathLocks(keys, async () => {
        const planned = await plan(ctx.workspaceDir, parsed.hunks);
        if (!planned.ok) {
          return errorResult(`Patch rejected:\n${planned.errors.map((e) => `- ${e}`).join('\n')}\nNo files were modified.`, { code: 'rejected', errors: planned.errors });
        }
        const ordered = [...planned.ops.filter((op) => op.kind === 'write'), ...planned.ops.filter((op) => op.kind === 'delete')];
        const done: Planned[] = [];
        for (const op of ordered) {
          const outcome = op.kind === 'write' ? await write(op.target, op.content) : await unlinkInWorkspace(op.target);
          if (!outcome.ok) {
            const problems = await rollback(done, ctx.workspaceDir);
            ctx.log.warn({ path: op.target.rel, error: outcome.message, rollbackProblems: problems }, 'apply_patch failed while writing');
            const tail = problems.length === 0 ? 'Files already changed were restored; no files were modified.' : `Restoring files already changed failed for: ${problems.join('; ')}`;
            return errorResult(`Patch failed at ${op.target.rel}: ${outcome.message}\n${tail}`, { code: outcome.code, rollbackProblems: problems });
          }
          done.push(op);
        }
        const summary = planned.ops
          .filter((op) => !(op.kind === 'delete' && op.moveSource)) // a move's source removal is part of its M line
          .map((op) => `${op.kind === 'delete' ? 'D' : op.letter} ${op.target.rel}`);
        return textResult(`Success. Updated the following files:\n${summary.join('\n')}`, {
          files: planned.ops.map((op) => ({ op: op.kind === 'delete' ? 'delete' : op.letter === 'A' ? 'add' : 'update', path: op.target.rel })),
        });
      });
    },
  };
}

export const applyPatchTool = createApplyPatchTool();
