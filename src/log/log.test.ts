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
