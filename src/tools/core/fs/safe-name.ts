import path from 'node:path';

/** A basename without path separators, control characters or a leading dot (for files people or platforms name). */
export function safeName(name: string): string {
  const base = path.posix.basename(name.replaceAll('\\', '/')).replace(/[\u0000-\u001f\u007f]/g, '').replace(/[^\w.-]/g, '_').replace(/^\.+/, '').trim();
  return (base === '' ? 'file' : base).slice(0, 120);
}
