import type { OutboundFile } from '../../src/gateway/types.js';

/**
 * The files of a reply that a platform takes: at most `maxFiles`, each at most `maxBytes`.
 * The rest are named in a line of text instead (with where they are saved), so a file too
 * large to post is never dropped silently.
 */
export function fitFiles(files: readonly OutboundFile[] | undefined, limits: { maxBytes: number; maxFiles: number }): { fit: OutboundFile[]; notes: string[] } {
  const fit: OutboundFile[] = [];
  const notes: string[] = [];
  for (const file of files ?? []) {
    const where = file.path ? `; it is saved as ${file.path} in the workspace` : '';
    if (file.data.length > limits.maxBytes) notes.push(`${file.name} (${mb(file.data.length)}) is over the ${mb(limits.maxBytes)} limit for files here${where}.`);
    else if (fit.length >= limits.maxFiles) notes.push(`${file.name} was not attached: at most ${limits.maxFiles} files go with one message${where}.`);
    else fit.push(file);
  }
  return { fit, notes };
}

const mb = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')} MB`;

/** Text and notes joined as one message body. */
export const withNotes = (text: string, notes: readonly string[]) => (notes.length === 0 ? text : [text, ...notes].filter((t) => t !== '').join('\n\n'));
