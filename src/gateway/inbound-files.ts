import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ImagePart } from '../models/types.js';
import { sniffFileKind } from '../tools/core/fs/file-kind.js';
import { resolveWorkspacePath } from '../tools/core/fs/workspace.js';
import { writeAtomic } from '../tools/core/fs/workspace-io.js';
import { safeName } from '../tools/core/fs/safe-name.js';

export { safeName };
import type { InboundAttachment } from './types.js';

/** Largest file taken in, and how many from one message. */
export const INBOUND_MAX_BYTES = 20 * 1024 * 1024;
export const INBOUND_MAX_FILES = 8;
/** Images larger than this are saved, not sent to the model. */
const IMAGE_PART_MAX_BYTES = 5 * 1024 * 1024;

export const INBOX_DIR = 'inbox';

export interface TakenIn {
  /** Images for a vision model, as image parts of the message. */
  images: ImagePart[];
  /** One line per file for the model: where it is saved, or why it was not taken. */
  notes: string[];
}

/**
 * The files of a message, taken in when its turn runs: an image (sniffed, not as declared) goes
 * to the model as an image part when the model reads images, and is saved too; any other file
 * is saved under `inbox/` in the agent's workspace, written through the workspace guard (an
 * `inbox` symlink leading out is refused), and named to the model by its path, so `read` and
 * the other tools reach it. Voice messages are transcribed by `transcribe` when given, else named
 * as not transcribed. Names are reduced to
 * a safe basename; nothing a sender names can choose the directory.
 */
export async function takeInFiles(
  attachments: readonly InboundAttachment[] | undefined,
  options: {
    workspaceDir: string;
    vision: boolean;
    now?: Date;
    signal?: AbortSignal | undefined;
    /**
     * Speech to text for voice messages and audio files (`tools.media.audio`, through the media
     * understanding module): the text for the model, already marked as untrusted, or why not.
     */
    transcribe?: ((file: { id: string; name: string; mimeType: string | undefined; data: Buffer }) => Promise<{ ok: true; text: string } | { ok: false; why: string }>) | undefined;
  },
): Promise<TakenIn> {
  const taken: TakenIn = { images: [], notes: [] };
  const list = attachments ?? [];
  for (const [i, a] of list.entries()) {
    const label = safeName(a.name);
    if (i >= INBOUND_MAX_FILES) {
      taken.notes.push(`[file ${label} was not taken: at most ${INBOUND_MAX_FILES} files per message]`);
      continue;
    }
    if (a.size !== undefined && a.size > INBOUND_MAX_BYTES) {
      taken.notes.push(`[file ${label} (${a.size} bytes) was not taken: over ${INBOUND_MAX_BYTES} bytes]`);
      continue;
    }
    const got = await a.download(INBOUND_MAX_BYTES, options.signal);
    if (!got.ok) {
      taken.notes.push(`[file ${label} could not be fetched: ${got.error}]`);
      continue;
    }
    const kind = sniffFileKind(got.data);
    const saved = await saveInbox(options.workspaceDir, label, got.data, options.now ?? new Date());
    const where = saved.ok ? `saved as ${saved.rel}` : `not saved: ${saved.error}`;
    if (kind.kind === 'image' && options.vision && got.data.length <= IMAGE_PART_MAX_BYTES) {
      taken.images.push({ type: 'image', data: got.data.toString('base64'), mimeType: kind.mimeType });
      taken.notes.push(`[image ${label} attached above; ${where}]`);
    } else if (kind.kind === 'image' && !options.vision) {
      taken.notes.push(`[image ${label} (${kind.mimeType}) ${where}; not attached: the model answering here does not read images]`);
    } else if (a.voice || a.mimeType?.startsWith('audio/')) {
      const heard = options.transcribe ? await options.transcribe({ id: a.id, name: label, mimeType: a.mimeType, data: got.data }) : { ok: false as const, why: 'no speech-to-text model is configured (tools.media.audio)' };
      taken.notes.push(heard.ok ? `[voice message ${label}, ${where}]\n${heard.text}` : `[voice message ${label}, ${where}; it is not transcribed: ${heard.why}]`);
    } else {
      taken.notes.push(`[file ${label} (${got.data.length} bytes, ${kind.kind === 'image' ? kind.mimeType : (a.mimeType ?? kind.kind)}) ${where}]`);
    }
  }
  return taken;
}

async function saveInbox(workspaceDir: string, name: string, data: Buffer, now: Date): Promise<{ ok: true; rel: string } | { ok: false; error: string }> {
  await mkdir(path.resolve(workspaceDir), { recursive: true });
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const resolved = await resolveWorkspacePath(workspaceDir, `${INBOX_DIR}/${stamp}-${randomBytes(2).toString('hex')}-${name}`);
  if (!resolved.ok) return { ok: false, error: resolved.message ?? 'refused by the workspace guard' };
  // Written as generated files are: through the guard, atomically, parents created inside it.
  const written = await writeAtomic(resolved, data);
  return written.ok ? { ok: true, rel: resolved.rel } : { ok: false, error: written.message ?? 'could not write' };
}
