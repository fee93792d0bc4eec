/**
 * Where media tools put what they make: `generated/` inside the agent workspace, written
 * through the workspace guard so a `generated` symlink leading out is refused, not followed.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { resolveWorkspacePath, type GuardError } from '../fs/workspace.js';
import { writeAtomic } from '../fs/workspace-io.js';

export const GENERATED_DIR = 'generated';

/** `generated/<prefix>-<UTC yyyymmdd-hhmmss>-<6 hex>.<ext>`: sortable by time, never colliding. */
export function generatedName(prefix: string, ext: string, now: Date, random: string): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${GENERATED_DIR}/${prefix}-${stamp}-${random}.${ext}`;
}

/** Saves `data` as a new generated file; answers its workspace-relative path. */
export async function saveGenerated(workspaceDir: string, prefix: string, ext: string, data: Buffer, now = new Date()): Promise<{ ok: true; rel: string } | GuardError> {
  // The workspace may not exist yet on a first run; it is Warden's own directory to create.
  await mkdir(path.resolve(workspaceDir), { recursive: true });
  const resolved = await resolveWorkspacePath(workspaceDir, generatedName(prefix, ext, now, randomBytes(3).toString('hex')));
  if (!resolved.ok) return resolved;
  const written = await writeAtomic(resolved, data);
  return written.ok ? { ok: true, rel: resolved.rel } : written;
}
