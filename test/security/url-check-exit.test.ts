// `warden url-check` as a script uses it: `warden url-check "$URL" && curl "$URL"`. A blocked URL
// must exit non-zero (5, as `exec-check` deny and `access check` refused), whatever shape the
// attacker gives the address; only an allowed URL exits 0. Run through the built CLI, as a
// script runs it. No case needs DNS: every host is a literal or a name the checker refuses unresolved.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));
const cwd = mkdtempSync(path.join(tmpdir(), 'warden-url-exit-'));
writeFileSync(path.join(cwd, 'warden.config.yaml'), 'ops:\n  port: 19471\n');
const run = (argv: string[]) => execa('node', [BIN, 'url-check', ...argv], { cwd, reject: false, timeout: 20_000, env: { WARDEN_LOG_LEVEL: 'silent', WARDEN_DATA_DIR: '' } });

describe('warden url-check exits 5 on every blocked URL, 0 only when allowed', () => {
  it.each<readonly [string, number, string[]]>([
    ['a private IPv4 literal', 5, ['http://10.0.0.1/admin']],
    ['loopback', 5, ['http://127.0.0.1:22/']],
    ['the cloud metadata address', 5, ['http://169.254.169.254/latest/meta-data/']],
    ['loopback spelled as one decimal number', 5, ['http://2130706433/']],
    ['loopback spelled in hex', 5, ['http://0x7f.0.0.1/']],
    ['loopback behind userinfo that looks like a public host', 5, ['http://example.com@127.0.0.1/']],
    ['IPv6 loopback', 5, ['http://[::1]/']],
    ['IPv4-mapped IPv6 private address', 5, ['http://[::ffff:10.0.0.1]/']],
    ['the unspecified address', 5, ['http://0.0.0.0/']],
    ['localhost by name', 5, ['http://localhost/']],
    ['a non-HTTP scheme', 5, ['file:///etc/passwd']],
    ['not a URL at all', 5, ['not a url']],
    ['the ops port the config opens, for the browser', 5, ['http://127.0.0.1:19471/metrics', '--tool', 'browser']],
    ['a public IPv4 literal', 0, ['http://93.184.215.14/']],
    ['a public IPv4 literal for the browser', 0, ['https://93.184.215.14/', '--tool', 'browser']],
  ])('%s → exit %i', async (_name, code, argv) => {
    const r = await run([...argv, '--json']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(code);
    const verdict = JSON.parse(r.stdout) as { allowed: boolean; reason: string };
    expect(verdict.allowed).toBe(code === 0);
    expect(verdict.reason.length).toBeGreaterThan(0);
  }, 30_000);

  it('the human form exits the same way and says why', async () => {
    const blocked = await run(['http://10.0.0.1/']);
    expect(blocked.exitCode).toBe(5);
    expect(blocked.stdout).toMatch(/^blocked: blocked address 10\.0\.0\.1/);
    const allowed = await run(['http://93.184.215.14/']);
    expect(allowed.exitCode).toBe(0);
    expect(allowed.stdout).toMatch(/^allowed:/);
  }, 30_000);
});
