// The tests that launch `bin/warden.js` run the build in dist/: bring it up to date with the
// sources first (a no-op when it is), so no test runs yesterday's JavaScript. The store tests
// run on both engines: a throwaway PostgreSQL cluster serves the whole run.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startTestCluster } from './postgres-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the test cluster's `postgres` database. */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.mjs', import.meta.url)), '--quiet'], { stdio: 'inherit' });
  const cluster = await startTestCluster();
  project.provide('postgresUrl', cluster.url);
  return () => cluster.stop();
}
