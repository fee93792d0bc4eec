// The MCP commands and the MCP tools in the other commands, against the real fixture server
// (stdio): `warden mcp list` / `mcp tools`, `warden tools` and `--explain`, `warden invoke`.
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import type { CliIO } from '../../src/cli/args.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/mcp/server.mjs');

function workdir(extra = ''): { dir: string; log: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-mcp-cli-'));
  const log = path.join(dir, 'mcp.log');
  writeFileSync(
    path.join(dir, 'warden.config.yaml'),
    [
      'owners: { web: ["me"] }',
      'tools: { profile: coding }',
      'mcp:',
      '  servers:',
      '    fix:',
      `      command: ${JSON.stringify(process.execPath)}`,
      `      args: [${JSON.stringify(FIXTURE)}]`,
      `      env: { MCP_FIXTURE_LOG: ${JSON.stringify(log)} }`,
      '      tools: { echo: { approval: always } }',
      '    broken:',
      '      command: no-such-mcp-binary',
      extra,
    ].join('\n'),
  );
  return { dir, log };
}

async function cli(dir: string, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: (t) => void (stdout += `${t}\n`), stderr: (t) => void (stderr += `${t}\n`), cwd: dir, env: {} };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

describe('warden mcp', () => {
  it('list: every server with its state, tool count and last error (--json)', async () => {
    const { dir } = workdir();
    const { code, stdout } = await cli(dir, ['mcp', 'list', '--json']);
    expect(code).toBe(0);
    const { servers } = JSON.parse(stdout) as { servers: Array<Record<string, unknown>> };
    expect(servers.find((s) => s.name === 'fix')).toMatchObject({ state: 'connected', tools: 8, serverInfo: 'warden-fixture 1.0.0', failures: 0 });
    expect(servers.find((s) => s.name === 'broken')).toMatchObject({ state: 'failed', tools: 0, lastError: 'command no-such-mcp-binary not found on PATH' });
    const human = await cli(dir, ['mcp', 'list']);
    expect(human.stdout).toContain('fix: connected, 8 tools — stdio ');
    expect(human.stdout).toContain('broken: failed, 0 tools — stdio no-such-mcp-binary\n  last error: command no-such-mcp-binary not found on PATH');
  });

  it('tools NAME: ids, annotations and whether a call asks, with why', async () => {
    const { dir } = workdir();
    const { code, stdout } = await cli(dir, ['mcp', 'tools', 'fix']);
    expect(code).toBe(0);
    expect(stdout).toContain('fix__delete_repo — Delete a repository for good.\n      annotations: destructiveHint: true; approval: asks (approval: auto (the default): the server marks the tool destructive (destructiveHint: true))');
    expect(stdout).toContain('fix__echo — Echo a text back.\n      annotations: readOnlyHint: true; approval: asks (mcp.servers.fix.tools.echo.approval = always: every call asks)');
    expect(stdout).toContain('fix__wait — Wait some milliseconds, then answer.\n      annotations: readOnlyHint: true; approval: no (approval: auto (the default): the server marks the tool read-only (readOnlyHint: true))');
  });

  it('an unknown server or subcommand is exit 2 with a hint', async () => {
    const { dir } = workdir();
    const unknown = await cli(dir, ['mcp', 'tools', 'fixx']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no MCP server "fixx" in mcp.servers (did you mean "fix"?)');
    expect((await cli(dir, ['mcp', 'show'])).code).toBe(2);
  });
});

describe('MCP tools in the other commands', () => {
  it('warden tools lists them, a failing server as unavailable with why; --explain names the server\'s tool', async () => {
    const { dir } = workdir();
    const { stdout } = await cli(dir, ['tools', '--json']);
    const answer = JSON.parse(stdout) as { tools: string[]; unavailable: Array<{ tool: string; why: string }> };
    expect(answer.tools).toEqual(expect.arrayContaining(['fix__echo', 'fix__delete_repo', 'read', 'exec']));
    expect(answer.unavailable).toContainEqual({ tool: 'broken__*', why: 'MCP server broken failed: command no-such-mcp-binary not found on PATH; its tools are not known yet' });
    const denied = await cli(dir, ['tools', '--json', '--explain', 'fix__delete_repo']);
    expect(denied.code).toBe(0);
    expect(JSON.stringify(JSON.parse(denied.stdout).explain)).toContain('fix__delete_repo');
  });

  it('a policy deny of <server>__* removes the server\'s tools in warden tools', async () => {
    const { dir } = workdir('channels: { web: { tools: { deny: ["fix__*"] } } }');
    const answer = JSON.parse((await cli(dir, ['tools', '--json'])).stdout) as { tools: string[]; removed: Array<{ tool: string; by: string }> };
    expect(answer.tools.some((t) => t.startsWith('fix__'))).toBe(false);
    expect(answer.removed.find((r) => r.tool === 'fix__echo')?.by).toMatch(/deny/);
  });

  it('warden invoke calls one through the chain; a destructive one asks for approval (--approve deny, once)', async () => {
    const { dir, log } = workdir();
    const wait = await cli(dir, ['invoke', 'fix__wait', '--sender', 'me', '--args', '{"ms":1}', '--json']);
    expect(JSON.parse(wait.stdout)).toMatchObject({ status: 'ok' });
    expect(wait.stdout).toContain('waited 1 ms');
    const bad = await cli(dir, ['invoke', 'fix__wait', '--sender', 'me', '--args', '{"ms":"soon"}']);
    expect(bad.stdout).toContain('Invalid arguments for fix__wait');
    const denied = await cli(dir, ['invoke', 'fix__delete_repo', '--sender', 'me', '--args', '{"repo":"acme/web"}', '--approve', 'deny', '--json']);
    expect(JSON.parse(denied.stdout)).toMatchObject({ status: 'blocked' });
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '').not.toContain('delete_repo');
    const approved = await cli(dir, ['invoke', 'fix__delete_repo', '--sender', 'me', '--args', '{"repo":"acme/web"}', '--approve', 'once']);
    expect(approved.stdout).toContain('deleted acme/web');
  });
});

describe('warden doctor', () => {
  it('reports each MCP server: connected with its tools, a failing one as a warning with why (exit 0)', async () => {
    const { dir } = workdir();
    const { runDoctorChecks } = await import('../../src/cli/doctor.js');
    const { loadConfig } = await import('../../src/config/index.js');
    const loaded = loadConfig({ file: path.join(dir, 'warden.config.yaml'), env: {} });
    if (!loaded.ok) throw loaded.error;
    const checks = await runDoctorChecks(loaded.value.config, dir, {}, { probe: { identity: { uid: 0, gid: 0 }, checks: [] } as never });
    expect(checks.find((c) => c.name === 'mcp fix')).toMatchObject({ ok: true, detail: expect.stringMatching(/^connected \(stdio .*\), 8 tools, warden-fixture 1\.0\.0$/) });
    expect(checks.find((c) => c.name === 'mcp broken')).toMatchObject({ ok: true, warn: true, detail: 'failed: command no-such-mcp-binary not found on PATH (stdio no-such-mcp-binary); its tools are unavailable, Warden keeps retrying' });
  });
});
