import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli.js';

async function runCli(argv: string[], files: Record<string, string> = {}) {
  const cwd = mkdtempSync(path.join(tmpdir(), 'warden-url-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(cwd, name), text);
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { cwd, env: {}, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

describe('warden url-check', () => {
  it('answers the JSON contract for a blocked literal, and exits 5 (blocked)', async () => {
    const { code, stdout } = await runCli(['url-check', 'http://10.0.0.1/admin', '--json']);
    expect(code).toBe(5);
    expect(JSON.parse(stdout)).toEqual({ allowed: false, reason: 'blocked address 10.0.0.1: IPv4 private address', address: '10.0.0.1' });
  });

  it('uses browser.ssrfPolicy for --tool browser', async () => {
    const config = { 'warden.config.yaml': 'browser:\n  ssrfPolicy:\n    allowPrivateNetwork: true\n' };
    const browser = await runCli(['url-check', 'http://10.0.0.1/', '--tool', 'browser', '--json'], config);
    expect(JSON.parse(browser.stdout)).toMatchObject({ allowed: true, address: '10.0.0.1' });
    expect(browser.code).toBe(0);
    const fetch = await runCli(['url-check', 'http://10.0.0.1/', '--json'], config);
    expect(JSON.parse(fetch.stdout)).toMatchObject({ allowed: false });
    expect(fetch.code).toBe(5);
  });

  it('exits 2 on bad arguments and bad config', async () => {
    expect((await runCli(['url-check'])).code).toBe(2);
    expect((await runCli(['url-check', 'http://x/', '--tool', 'curl'])).code).toBe(2);
    const bad = await runCli(['url-check', 'http://8.8.8.8/'], { 'warden.config.yaml': 'browser:\n  ssrfPolicy:\n    allowPrivateNetwrk: true\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('browser.ssrfPolicy.allowPrivateNetwrk: unknown key (did you mean "allowPrivateNetwork"?)');
  });
});
