// Imported first by every bench entry script: the temporary folders a run makes (its own, and
// those of the processes and clusters it starts) land in one folder for the run, removed when
// the process ends, as `test/global-setup.ts` does for the suite. Benches make stores, clusters
// and workspaces by the dozen per run; before, each run left them all under the system's temp
// folder.
//
// Moved by setting TMPDIR before any other module of the script runs (`os.tmpdir()` reads it
// at each call; child processes inherit it). Removed on a normal end, on `process.exit`, and on
// SIGINT/SIGTERM (then the signal is raised again, so the process still ends as it would have).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const runDir = mkdtempSync(path.join(tmpdir(), 'warden-bench-'));
// Like the system's temp folder itself: sandboxes and clusters run as other users too.
chmodSync(runDir, 0o1777);
for (const name of ['TMPDIR', 'TMP', 'TEMP']) process.env[name] = runDir;

const remove = () => rmSync(runDir, { recursive: true, force: true });
process.once('exit', remove);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    remove();
    process.kill(process.pid, signal);
  });
}
