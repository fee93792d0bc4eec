// The browser through the governed call path (`warden invoke`): the surface offers it only via
// alsoAllow, the chain validates its arguments, and a refused URL never starts Chromium.
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../../src/cli/args.js';
import { main } from '../../src/cli.js';

function workdir(config: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-browser-invoke-'));
  writeFileSync(path.join(dir, 'warden.config.yaml'), config);
  return dir;
}

async function invoke(dir: string, args: object) {
  let stdout = '';
  const io: CliIO = { stdout: (t) => void (stdout += `${t}\n`), stderr: () => {}, cwd: dir, env: {} };
  const code = await main(['invoke', 'browser', '--sender', 'me', '--json', '--args', JSON.stringify(args)], io);
  return { code, out: JSON.parse(stdout) as { status: string; content?: Array<{ text: string }>; error?: string; details?: { status?: string } } };
}

describe('browser through warden invoke', () => {
  it('is not on the surface of a profile that does not list it', async () => {
    const dir = workdir('owners: { web: ["me"] }\ntools: { profile: coding }\n');
    const { out } = await invoke(dir, { action: 'status' });
    expect(JSON.stringify(out)).toMatch(/browser/);
    expect(out.status).not.toBe('ok');
  });

  it('with alsoAllow: refuses private and file URLs before any Chromium starts', async () => {
    const dir = workdir('owners: { web: ["me"] }\ntools: { profile: coding, alsoAllow: [browser] }\n');
    for (const url of ['http://127.0.0.1:9/', 'http://169.254.169.254/', 'file:///etc/passwd']) {
      const { code, out } = await invoke(dir, { action: 'open', url });
      // The tool ran and answered with an error result: `warden invoke` exits 6 (docs/cli.md).
      expect(code).toBe(6);
      expect(JSON.stringify(out)).toMatch(/Navigation blocked/);
    }
    expect(existsSync(path.join(dir, 'data', 'browser'))).toBe(false);
  });

  it('validates arguments against the schema', async () => {
    const dir = workdir('owners: { web: ["me"] }\ntools: { profile: coding, alsoAllow: [browser] }\n');
    const { out } = await invoke(dir, { action: 'fly' });
    expect(JSON.stringify(out)).toMatch(/Invalid arguments for browser/);
  });
});
