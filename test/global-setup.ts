// The tests that launch `bin/warden.js` run the build in dist/: bring it up to date with the
// sources first (a no-op when it is), so no test runs yesterday's JavaScript. The store tests
// run on both engines: a throwaway PostgreSQL cluster serves the whole run.
//
// Every temporary folder a test makes (its own, and those of the processes it starts) lands in
// one folder for the run, removed at the end: a suite of thousands of cases must not leave
// thousands of folders behind on the machine it runs on. The name stays short because unix
// socket paths under it are limited to 108 bytes.
//
// Sandboxes started as root run as the run's own id (sandbox-id-lease.ts), so a second suite on
// the same host neither trips this one's shared-uid refusal nor sweeps its sandboxes.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startTestCluster } from './postgres-cluster.js';
import { leaseSandboxId } from './sandbox-id-lease.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the test cluster's `postgres` database. */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.mjs', import.meta.url)), '--quiet'], { stdio: 'inherit' });
  // Before TMPDIR moves: the locks live in the temp folder every run shares.
  const sandboxId = leaseSandboxId(tmpdir());
  process.env.WARDEN_SANDBOX_ID = String(sandboxId.id);
  const runDir = mkdtempSync(path.join(tmpdir(), 'wt-'));
  // Like /tmp itself: the tests run Warden and sandboxes as other users too.
  chmodSync(runDir, 0o1777);
  for (const name of ['TMPDIR', 'TMP', 'TEMP']) process.env[name] = runDir;
  const cluster = await startTestCluster();
  project.provide('postgresUrl', cluster.url);
  return async () => {
    cluster.stop();
    try {
      // In a process of its own, so this one's event loop stays free: vitest runs this teardown
      // before it hears its last worker exit, with a 10 s timer on that exit. A run leaves GBs in
      // hundreds of thousands of files here, and rmSync blocked the loop past the timer: every
      // run ended with a false "Timeout terminating forks worker" for its last file.
      await promisify(execFile)(process.execPath, ['-e', 'require("node:fs").rmSync(process.argv[1], { recursive: true, force: true })', runDir]);
    } finally {
      sandboxId.release();
    }
  };
}
