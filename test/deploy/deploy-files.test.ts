// The deployment files Warden ships, read as the tools that use them would: the Dockerfile's
// instructions, compose.yaml as YAML, the container config through Warden's own loader, and
// the systemd unit's keys (and `systemd-analyze verify` where it is installed). None of this
// builds an image or starts a unit; what it shows is that the files say what docs/operations.md says.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { checkBind } from '../../adapters/web/access.js';
import { loadConfig } from '../../src/config/index.js';
import { parseStoreUrl } from '../../src/store/store.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions, continuation lines joined, comments dropped, split into stages. */
function dockerStages(text: string): Instruction[][] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const stages: Instruction[][] = [];
  for (const line of joined.split('\n')) {
    const t = line.trim();
    if (!t || t.startsWith('#')) continue;
    const [, op = '', args = ''] = /^(\S+)\s*(.*)$/.exec(t) ?? [];
    if (op.toUpperCase() === 'FROM') stages.push([]);
    stages.at(-1)?.push({ op: op.toUpperCase(), args: args.replace(/\s+/g, ' ') });
  }
  return stages;
}

describe('Dockerfile', () => {
  const stages = dockerStages(read('Dockerfile'));
  const final = stages.at(-1)!;
  const runs = (stage: Instruction[]) => stage.filter((i) => i.op === 'RUN').map((i) => i.args).join(' && ');

  it('every stage is Node 20 slim', () => {
    expect(stages.length).toBeGreaterThan(0);
    for (const stage of stages) expect(stage[0]!.args).toMatch(/^node:20-slim\b/);
  });

  it.each(['chromium', 'bubblewrap', 'util-linux', 'ca-certificates'])('the image installs Debian\'s %s', (pkg) => {
    expect(runs(final)).toMatch(new RegExp(`apt-get install [^&]*\\b${pkg}\\b`));
  });

  it('installs the locked dependencies with npm ci, and runs the build when the package has one', () => {
    expect(stages.map(runs).join(' ')).toMatch(/\bnpm ci\b/);
    const pkg = JSON.parse(read('package.json')) as { scripts?: Record<string, string> };
    if (pkg.scripts?.build) {
      expect(stages.map(runs).join(' ')).toMatch(/npm ci [^&]*&& npm run build/);
      // What the build made is what the image runs: bin/warden.js starts dist/ when it is there.
      expect(final.filter((i) => i.op === 'COPY').map((i) => i.args)).toContain('--from=build /app/dist ./dist');
      expect(read('.dockerignore').split('\n')).toContain('dist');
    } else expect(stages.map(runs).join(' ')).not.toMatch(/npm run build/);
  });

  it('runs as a non-root user from USER on, and ENTRYPOINT/CMD come after it', () => {
    const users = final.filter((i) => i.op === 'USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.args.split(':')[0]!;
    expect(['root', '0', '']).not.toContain(user);
    const at = final.lastIndexOf(users.at(-1)!);
    expect(final.slice(at + 1).some((i) => i.op === 'RUN')).toBe(false);
    expect(final.findIndex((i) => i.op === 'CMD')).toBeGreaterThan(at);
    // The user exists in the image: created by useradd before USER.
    expect(runs(final)).toMatch(new RegExp(`useradd [^&]*\\b${user}\\b`));
  });

  it('copies every source folder the CLI loads, and .dockerignore leaves them in', () => {
    const copied = final.filter((i) => i.op === 'COPY').map((i) => i.args.split(' ')[0]);
    const ignored = read('.dockerignore').split('\n').map((l) => l.trim()).filter(Boolean);
    for (const dir of ['bin', 'src', 'adapters', 'plugins', 'skills']) {
      expect(copied, dir).toContain(dir);
      expect(ignored, dir).not.toContain(dir);
    }
    // What the running code imports (tests aside) lies in the copied folders.
    const reached = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(rel);
        else if (/\.ts$/.test(entry.name) && !/\.test\.ts$|testing\.ts$/.test(entry.name)) {
          for (const m of read(rel).matchAll(/from '(\.{1,2}\/[^']+)'/g)) reached.add(path.relative(ROOT, path.resolve(ROOT, dir, m[1]!)).split(path.sep)[0]!);
        }
      }
    };
    for (const dir of ['src', 'adapters', 'plugins']) walk(dir);
    for (const top of reached) expect(copied, `the code imports from ${top}/`).toContain(top);
  });

  it('its health check asks the ops listener the container config opens', () => {
    const health = final.find((i) => i.op === 'HEALTHCHECK')!.args;
    expect(health).toContain('http://127.0.0.1:3004/healthz');
    expect(final.find((i) => i.op === 'EXPOSE')!.args.split(' ')).toEqual(expect.arrayContaining(['3000', '3004']));
    expect(final.find((i) => i.op === 'CMD')!.args).toContain('/config/warden.config.yaml');
  });
});

describe('the container config (deploy/container.example.yaml)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-deploy-'));
  const file = path.join(dir, 'warden.config.yaml');
  writeFileSync(file, read('deploy/container.example.yaml'));

  it('loads with the token set: the web chat and the ops listener on every address, each allowed to be', () => {
    const r = loadConfig({ file, cwd: dir, env: { WARDEN_WEB_TOKEN: 'a-long-random-token-0123456789' } });
    if (!r.ok) throw r.error;
    const { config } = r.value;
    expect(config.ops).toEqual({ enabled: true, host: '0.0.0.0', port: 3004, exposeBeyondLoopback: true });
    expect(config.channels.web).toMatchObject({ host: '0.0.0.0', port: 3000, token: 'a-long-random-token-0123456789' });
    expect(checkBind(config.channels.web.host, config.channels.web.token)).toEqual({ ok: true });
    expect(config.agents.defaults.workspace).toBe('/workspace');
    expect(parseStoreUrl(config.store?.url)).toEqual({ engine: 'sqlite' });
  });

  it('takes its store from WARDEN_STORE_URL (compose sets it to its PostgreSQL service)', () => {
    const r = loadConfig({ file, cwd: dir, env: { WARDEN_WEB_TOKEN: 'a-long-random-token-0123456789', WARDEN_STORE_URL: 'postgres://warden:pw@postgres:5432/warden' } });
    if (!r.ok) throw r.error;
    expect(parseStoreUrl(r.value.config.store?.url)).toMatchObject({ engine: 'postgres', display: 'postgres://warden@postgres:5432/warden' });
  });

  it('refuses to load without WARDEN_WEB_TOKEN, naming it', () => {
    const r = loadConfig({ file, cwd: dir, env: {} });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.problems.map((p) => `${p.path}: ${p.message}`).join('\n')).toMatch(/channels\.web\.token: environment variable WARDEN_WEB_TOKEN is not set/);
  });
});

describe('compose.yaml', () => {
  const compose = parseYaml(read('compose.yaml')) as { services: Record<string, any>; volumes?: Record<string, unknown> };
  const warden = compose.services.warden;

  it('builds Warden from this folder, with its state and workspace on volumes', () => {
    expect(warden.build).toBe('.');
    expect(warden.volumes).toEqual(expect.arrayContaining(['warden-data:/data', 'warden-workspace:/workspace']));
    expect(Object.keys(compose.volumes ?? {})).toEqual(expect.arrayContaining(['warden-data', 'warden-workspace']));
  });

  it('publishes the web chat and the ops listener on the host\'s loopback only', () => {
    expect(warden.ports).toEqual(['127.0.0.1:3000:3000', '127.0.0.1:3004:3004']);
  });

  it('gives the sandbox what Docker withholds by default: user namespaces and an unmasked /proc', () => {
    expect(warden.security_opt).toEqual(expect.arrayContaining(['seccomp=unconfined', 'apparmor=unconfined', 'systempaths=unconfined']));
  });

  it('requires the web chat token and passes keys through from the environment', () => {
    expect(warden.environment.WARDEN_WEB_TOKEN).toMatch(/^\$\{WARDEN_WEB_TOKEN:\?/);
    for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'DISCORD_TOKEN', 'SLACK_BOT_TOKEN']) expect(warden.environment[key]).toBe(`\${${key}:-}`);
  });

  it('runs Warden on a PostgreSQL service it waits for, reachable only on the compose network', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['postgres', 'warden']);
    const postgres = compose.services.postgres;
    expect(postgres.ports).toBeUndefined();
    expect(postgres.healthcheck.test.join(' ')).toMatch(/pg_isready/);
    expect(warden.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(Object.keys(compose.volumes ?? {})).toContain('postgres-data');
    // One password, required, in both places; never written in the file.
    expect(postgres.environment.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    expect(warden.environment.WARDEN_STORE_URL).toMatch(/^postgres:\/\/warden:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\/warden$/);
  });
});

describe('the systemd unit (deploy/warden.service)', () => {
  const text = read('deploy/warden.service');
  const keys = new Map<string, string[]>();
  let section = '';
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t || t.startsWith('#')) continue;
    const s = /^\[(\w+)\]$/.exec(t);
    if (s) {
      section = s[1]!;
      continue;
    }
    const [k, ...v] = t.split('=');
    keys.set(`${section}.${k}`, [...(keys.get(`${section}.${k}`) ?? []), v.join('=')]);
  }
  const one = (k: string) => keys.get(k)?.at(-1);

  it('runs `warden start` as an unprivileged user and restarts it on failure', () => {
    expect(one('Service.User')).toBe('warden');
    expect(one('Service.ExecStart')).toMatch(/^\/usr\/bin\/node \S+\/bin\/warden\.js start --config \S+$/);
    expect(one('Service.Restart')).toBe('on-failure');
    expect(one('Install.WantedBy')).toBe('multi-user.target');
  });

  it('gives running turns their grace on stop (SIGTERM, more than sessions.shutdownGraceSec)', () => {
    expect(one('Service.KillSignal')).toBe('SIGTERM');
    expect(Number(one('Service.TimeoutStopSec'))).toBeGreaterThan(10);
  });

  it.each(['RestrictNamespaces', 'PrivateUsers', 'ProtectKernelTunables', 'ProtectProc', 'ProcSubset', 'SystemCallFilter'])('sets no %s, which would stop bubblewrap (user namespaces, a fresh /proc)', (key) => {
    expect(keys.has(`Service.${key}`)).toBe(false);
  });

  it('keeps the rest locked down: no new privileges, a read-only system, only the state dir writable', () => {
    expect(one('Service.NoNewPrivileges')).toBe('yes');
    expect(one('Service.ProtectSystem')).toBe('strict');
    expect(one('Service.ReadWritePaths')).toBe('/var/lib/warden');
  });

  const analyze = spawnSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' }).stdout.trim();
  it.skipIf(!analyze || !existsSync('/usr/bin/node'))('systemd-analyze verify finds nothing wrong in it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-unit-'));
    const unit = path.join(dir, 'warden.service');
    writeFileSync(unit, text);
    const r = spawnSync(analyze, ['verify', unit], { encoding: 'utf8', timeout: 20_000 });
    const about = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.includes(unit));
    // The checkout path need not exist here; everything else must be clean.
    expect(about.filter((l) => !/\/opt\/warden/.test(l))).toEqual([]);
  });
});
