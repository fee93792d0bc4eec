// A throwaway PostgreSQL cluster for the store tests' second engine: Debian's server binaries,
// `initdb` in a temporary directory, the server on a loopback port with its socket beside the
// data. initdb refuses to run as root, so as root the cluster belongs to the `postgres` user.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';

export interface TestCluster {
  /** Superuser URL of the `postgres` database (tests create a database each from it). */
  url: string;
  stop(): void;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql (run node scripts/test-setup.mjs)');
  return path.join(root, newest, 'bin');
}

/** `settings`: extra server settings (`-c name=value`), e.g. `shared_preload_libraries: 'pg_stat_statements'` for the benches' round-trip counts. */
export async function startTestCluster(settings: Record<string, string> = {}): Promise<TestCluster> {
  const bin = binDir();
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-pg-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  let asUser: (cmd: string, args: string[]) => [string, string[]] = (cmd, args) => [cmd, args];
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
    asUser = (cmd, args) => ['runuser', ['-u', 'postgres', '--', cmd, ...args]];
  }
  const run = (cmd: string, args: string[]): void => {
    const [c, a] = asUser(cmd, args);
    const result = spawnSync(c, a, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${cmd} failed (${result.status}): ${result.stderr || result.stdout}`);
  };
  run(path.join(bin, 'initdb'), ['-D', data, '-U', 'warden', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
  const port = await freePort();
  const options = `-h 127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200${Object.entries(settings).map(([k, v]) => ` -c ${k}=${v}`).join('')}`;
  run(path.join(bin, 'pg_ctl'), ['-D', data, '-o', options, '-l', path.join(dir, 'server.log'), '-w', '-t', '30', 'start']);
  let stopped = false;
  return {
    url: `postgres://warden@127.0.0.1:${port}/postgres`,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
