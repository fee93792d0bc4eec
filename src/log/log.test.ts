import { execa } from 'execa';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));
const env = () => {
  const e: Record<string, string | undefined> = { ...process.env, VITEST: undefined, VITEST_WORKER_ID: undefined, VITEST_POOL_ID: undefined, WARDEN_LOG_LEVEL: undefined };
  return e;
};

/** Logs one line at `method` from the sources under WARDEN_LOG_LEVEL=`level`: what reached stderr, and whether pino was loaded. */
async function logOnce(level: string, method: string): Promise<{ stderr: string; pinoLoaded: boolean }> {
  const script = [
    "import { createRequire } from 'node:module';",
    `import { log } from ${JSON.stringify(new URL('./log.ts', import.meta.url).href)};`,
    'const require = createRequire(import.meta.url);',
    `log[${JSON.stringify(method)}]('the line');`,
    'process.stdout.write(String(Object.keys(require.cache).some((f) => /[\\\\/]pino[\\\\/]pino\\.js$/.test(f))));',
  ].join('\n');
  const r = await execa('node', ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...env(), WARDEN_LOG_LEVEL: level, WARDEN_LOG_FORMAT: 'json' }, extendEnv: false });
  return { stderr: r.stderr, pinoLoaded: r.stdout === 'true' };
}

describe('a line below the level', () => {
  it.each([
    // level, method, written (and so pino loaded)
    ['silent', 'warn', false],
    ['silent', 'fatal', false],
    ['error', 'warn', false],
    ['error', 'error', true],
    ['warn', 'warn', true],
    ['info', 'debug', false],
    ['trace', 'trace', true],
  ])('WARDEN_LOG_LEVEL=%s, log.%s: written %s; pino is loaded only for a line that is written', async (level, method, written) => {
    const r = await logOnce(level, method);
    expect(r.stderr.includes('the line')).toBe(written);
    expect(r.pinoLoaded).toBe(written);
  });

  it('a level pino does not know is still pino\'s to refuse', async () => {
    await expect(logOnce('loud', 'warn')).rejects.toThrow(/default level:loud must be included/);
  });
});

describe('command output and logs', () => {
  it('a one-shot command answers on stdout alone; only warnings and errors reach stderr', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-logs-'));
    writeFileSync(path.join(dir, 'warden.config.yaml'), 'tools:\n  profile: coding\n');
    const r = await execa('node', [BIN, 'tools', '--json'], { cwd: dir, env: env(), extendEnv: false, reject: false });
    expect(r.exitCode).toBe(0);
    expect(() => JSON.parse(r.stdout)).not.toThrow();
    for (const line of r.stderr.split('\n').filter(Boolean)) {
      const level = /"level":(\d+)/.exec(line)?.[1];
      if (level) expect(Number(level)).toBeGreaterThanOrEqual(40);
    }
  });

  it('WARDEN_LOG_LEVEL still decides when set', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-logs-'));
    const r = await execa('node', [BIN, 'tools', '--json'], { cwd: dir, env: { ...env(), WARDEN_LOG_LEVEL: 'silent' }, extendEnv: false, reject: false });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
  });
});
