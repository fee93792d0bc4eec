import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../cli.js';

/**
 * `warden audit` and `warden doctor` tell the truth on what Warden ships: every
 * `config/*.example.yaml` and the embedded default (no config file at all). Audit raises no
 * false critical finding (the web chat's local user is its approver); doctor's exit code says
 * whether it printed a failure.
 */

const examplesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../config');
const empty = mkdtempSync(path.join(tmpdir(), 'warden-embedded-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

const SHIPPED: Array<[string, string[]]> = [
  ...readdirSync(examplesDir)
    .filter((f) => /\.example\.ya?ml$/.test(f))
    .map((f): [string, string[]] => [f, ['--config', path.join(examplesDir, f)]]),
  ['the embedded default (no config file)', []],
];

/** Every key and token the shipped configs refer to. */
const CREDENTIALS = {
  ANTHROPIC_API_KEY: 'k',
  OPENAI_API_KEY: 'k',
  GEMINI_API_KEY: 'k',
  BRAVE_API_KEY: 'k',
  DISCORD_TOKEN: 't',
  SLACK_BOT_TOKEN: 'xoxb-t',
  SLACK_SIGNING_SECRET: 's',
};

async function cli(argv: string[], env: NodeJS.ProcessEnv) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { cwd: empty, env, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

describe.each(SHIPPED)('%s', (_name, configArgs) => {
  it.each([['without credentials', {}], ['with every credential it names', CREDENTIALS]])('audit has no false critical finding (%s)', async (_how, env) => {
    const { code, stdout } = await cli(['audit', ...configArgs], env);
    expect(stdout).not.toMatch(/^CRITICAL/m);
    expect(stdout).not.toContain('approvals.no-approvers');
    expect(code).toBe(0);
  });

  it.each([['without credentials', {}], ['with every credential it names', CREDENTIALS]])('doctor exits 1 exactly when it prints a FAIL (%s)', async (_how, env) => {
    const { code, stdout } = await cli(['doctor', '--offline', ...configArgs], env);
    const failed = stdout.split('\n').filter((l) => l.startsWith('FAIL'));
    expect(code).toBe(failed.length > 0 ? 1 : 0);
    const json = await cli(['doctor', '--offline', '--json', ...configArgs], env);
    expect(json.code).toBe(code);
    expect((JSON.parse(json.stdout) as { checks: Array<{ ok: boolean }> }).checks.filter((c) => !c.ok)).toHaveLength(failed.length);
  });
});

describe('what doctor fails on the shipped configs', () => {
  it('names the missing model key, and nothing else of the config, when credentials are absent', async () => {
    const { code, stdout } = await cli(['doctor', '--config', path.join(examplesDir, 'local.example.yaml')], {});
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL model anthropic\/claude-sonnet-4-5\s+none of ANTHROPIC_API_KEY is set$/m);
  });
  it('passes the embedded default, warning that no model is configured (it runs without one)', async () => {
    const { code, stdout } = await cli(['doctor'], CREDENTIALS);
    expect(code).toBe(0);
    expect(stdout.split('\n').filter((l) => l.startsWith('FAIL'))).toEqual([]);
    expect(stdout).toMatch(/^warn model\s+no model configured: slash commands work/m);
    expect(stdout).toMatch(/^\s+fix: set models.default/m);
  });
});
