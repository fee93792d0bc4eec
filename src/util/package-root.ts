import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding this package's package.json, and with it skills/ and config/. Found by
 * walking up rather than by a fixed `../..`, because the same module runs from src/ (tests, tsx)
 * and from the chunks of the build in dist/.
 */
export function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PACKAGE_ROOT = packageRoot(path.dirname(fileURLToPath(import.meta.url)));
