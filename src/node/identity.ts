import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The node's stable id: made once in its state dir and read back on every start. It names the
 * machine's own exec allow-always grants in a store shared with the gateway or other nodes, so
 * it must not follow the node's display name (a second machine may take the same name) and must
 * survive restarts (a restarted node keeps its grants). A state dir without it is a new node:
 * it starts with no grants. Errors as values, naming the file.
 */
export function nodeId(stateDir: string): { ok: true; id: string } | { ok: false; error: string } {
  const file = path.join(stateDir, 'node-id');
  try {
    if (existsSync(file)) {
      const id = readFileSync(file, 'utf8').trim();
      return ID.test(id) ? { ok: true, id } : { ok: false, error: `${file}: not a node id (expected a UUID); remove it to start this node afresh, without its exec grants` };
    }
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const id = randomUUID();
    // `wx`: two nodes starting on one state dir at once cannot both write one.
    writeFileSync(file, `${id}\n`, { mode: 0o600, flag: 'wx' });
    return { ok: true, id };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return nodeId(stateDir);
    return { ok: false, error: `${file}: ${(err as Error).message}` };
  }
}
